REVOKE INSERT ON results FROM ruckus_agent;
GRANT INSERT ON results TO ruckus_agent;
DELETE FROM results WHERE sample > 0;
ALTER TABLE results DROP CONSTRAINT results_pkey, ADD CONSTRAINT results_pkey PRIMARY KEY (run_id, idx);
ALTER TABLE results
    DROP COLUMN exec_ms,
    DROP COLUMN exec_stderr,
    DROP COLUMN exec_status,
    DROP COLUMN sample;
ALTER TABLE runs
    DROP COLUMN exec_at,
    DROP COLUMN exec_counts,
    DROP COLUMN exec_pass,
    DROP COLUMN exec_error,
    DROP COLUMN exec_state,
    DROP COLUMN samples;
