-- Benchmarks kept over months: renamed, shared with every user (as
-- datasets are) and deleted softly, so their runs stay in the history.
--   visibility: private (owner and administrators) or shared (every
--     signed-in user may read it; only the owner and administrators may
--     change it).
--   deleted_at: set when the benchmark is deleted; it leaves every list
--     and page, and its runs and results are kept.
ALTER TABLE benchmarks
    ADD COLUMN visibility text NOT NULL DEFAULT 'private',
    ADD COLUMN deleted_at timestamptz,
    ADD CONSTRAINT benchmarks_visibility_check CHECK (visibility IN ('private', 'shared'));
CREATE INDEX benchmarks_shared_idx ON benchmarks (dataset_id) WHERE visibility = 'shared' AND deleted_at IS NULL;

-- A run's target across benchmarks: the history of a model × runtime ×
-- hardware on a dataset is read in order of when its runs finished.
CREATE INDEX runs_target_idx ON runs (model_id, runtime, hardware_profile, finished_at) WHERE state = 'completed';

-- Regressions: a completed run significantly worse than the previous
-- completed run of the same target on the same dataset, found when the run
-- is scored. One row per metric that regressed.
--   metric: quality (paired test over the items both runs scored),
--     throughput (output tokens/s), latency_p95 (p95 end-to-end ms).
--   delta: this run's figure minus the earlier run's (for quality the mean
--     of the per-item differences).
--   p_value: the paired test's two-sided p (quality only).
CREATE TABLE run_regressions (
    run_id         bigint           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    metric         text             NOT NULL,
    against_run_id bigint           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    delta          double precision NOT NULL,
    p_value        double precision,
    detail         text             NOT NULL DEFAULT '',
    found_at       timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, metric),
    CONSTRAINT run_regressions_metric_check CHECK (metric IN ('quality', 'throughput', 'latency_p95'))
);
CREATE INDEX run_regressions_against_idx ON run_regressions (against_run_id);
