-- A GPU node is less trusted than the server, and its role writes its
-- results and its run's live figures itself. A NaN, an infinity or a
-- negative time there would make every summary, interval and conclusion of
-- the run unwritable (JSON has no NaN) or wrong, so the database refuses
-- them as it refuses values too long (migration 0024): times within 0 ms
-- to 10^10 ms (115 days; BETWEEN is false for NaN, which sorts above every
-- number in PostgreSQL), counts and inter-token gaps not negative, a
-- request's send time a finite time, a run's rates finite and not
-- negative. NOT VALID: rows already kept are not rescanned; every new or
-- changed row is checked.
ALTER TABLE results
    ADD CONSTRAINT results_timings_bounds CHECK (
        (ttft_ms IS NULL OR ttft_ms BETWEEN 0 AND 1e10)
        AND (e2e_ms IS NULL OR e2e_ms BETWEEN 0 AND 1e10)
        AND (tpot_ms IS NULL OR tpot_ms BETWEEN 0 AND 1e10)
        AND (itl_mean_ms IS NULL OR itl_mean_ms BETWEEN 0 AND 1e10)
        AND (itl_p50_ms IS NULL OR itl_p50_ms BETWEEN 0 AND 1e10)
        AND (itl_p99_ms IS NULL OR itl_p99_ms BETWEEN 0 AND 1e10)
        AND (itl_max_ms IS NULL OR itl_max_ms BETWEEN 0 AND 1e10)
        AND isfinite(sent_at)) NOT VALID,
    ADD CONSTRAINT results_counts_bounds CHECK (
        prompt_tokens >= 0 AND completion_tokens >= 0 AND content_events >= 0
        AND 0 <= ALL (coalesce(itl_gaps_us, '{}'))
        AND 1 <= ALL (coalesce(itl_tokens, '{}'))) NOT VALID;

ALTER TABLE runs
    ADD CONSTRAINT runs_rates_bounds CHECK (
        measured_seconds BETWEEN 0 AND 1e10
        AND throughput BETWEEN 0 AND 1e12
        AND requests_per_s BETWEEN 0 AND 1e12
        AND (eta_seconds IS NULL OR eta_seconds BETWEEN 0 AND 1e10)
        AND (load_time_ms IS NULL OR load_time_ms BETWEEN 0 AND 1e10)) NOT VALID;
