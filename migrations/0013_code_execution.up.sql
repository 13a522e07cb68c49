-- Code execution (HumanEval, MBPP): several samples per item for pass@k,
-- and what the sandbox made of each.

-- A run may send each item n times (the benchmark's sampling n); every
-- answer is its own result, told apart by sample (0 for a run of n = 1,
-- so such runs read exactly as before).
ALTER TABLE runs
    ADD COLUMN samples integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT runs_samples_check CHECK (samples BETWEEN 1 AND 100),
    -- The execution of the run's answers in the sandbox: '' (none asked),
    -- queued, running, done or failed; its error; pass@k by k
    -- ({"1": 0.61, "10": 0.83}); the count of results by class; when it
    -- finished.
    ADD COLUMN exec_state  text NOT NULL DEFAULT '',
    ADD COLUMN exec_error  text NOT NULL DEFAULT '',
    ADD COLUMN exec_pass   jsonb,
    ADD COLUMN exec_counts jsonb,
    ADD COLUMN exec_at     timestamptz,
    ADD CONSTRAINT runs_exec_state_check CHECK (exec_state IN ('', 'queued', 'running', 'done', 'failed'));

ALTER TABLE results
    ADD COLUMN sample      smallint NOT NULL DEFAULT 0,
    -- passed, failed (an assertion), exception, syntax_error, timeout or
    -- killed (a limit: memory, CPU, processes, output); '' not executed.
    ADD COLUMN exec_status text NOT NULL DEFAULT '',
    -- The end of the program's stderr (bounded by the sandbox).
    ADD COLUMN exec_stderr text NOT NULL DEFAULT '',
    ADD COLUMN exec_ms     double precision,
    ADD CONSTRAINT results_sample_check CHECK (sample BETWEEN 0 AND 99),
    ADD CONSTRAINT results_exec_status_check
        CHECK (exec_status IN ('', 'passed', 'failed', 'exception', 'syntax_error', 'timeout', 'killed'));
ALTER TABLE results DROP CONSTRAINT results_pkey, ADD CONSTRAINT results_pkey PRIMARY KEY (run_id, idx, sample);

-- Agents write results but never what the sandbox found: their INSERT is
-- narrowed to the columns a request's record has.
REVOKE INSERT ON results FROM ruckus_agent;
GRANT INSERT (run_id, idx, sample, custom_id, status, output, finish_reason, prompt_tokens, completion_tokens,
    tokens_estimated, sent_at, ttft_ms, e2e_ms, tpot_ms, itl_mean_ms, itl_p50_ms, itl_p99_ms, itl_max_ms,
    content_events, http_status, request_id, error_class, error, phase, agent_id, itl_gaps_us, itl_tokens)
    ON results TO ruckus_agent;
