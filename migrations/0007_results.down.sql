DROP TABLE run_events;
DROP TABLE run_samples;
DROP TABLE results;
DROP INDEX runs_running_idx;
ALTER TABLE runs
    DROP COLUMN fence, DROP COLUMN resumed, DROP COLUMN mode, DROP COLUMN prompt_tokens,
    DROP COLUMN output_tokens, DROP COLUMN measured_seconds, DROP COLUMN segment_started_at,
    DROP COLUMN throughput, DROP COLUMN requests_per_s, DROP COLUMN eta_seconds, DROP COLUMN progress_at,
    DROP COLUMN stopped_by, DROP COLUMN load_time_ms, DROP COLUMN summary, DROP COLUMN gpu_summary,
    DROP COLUMN runtime_log;
