DROP TABLE run_regressions;
DROP INDEX runs_target_idx;
DROP INDEX benchmarks_shared_idx;
ALTER TABLE benchmarks
    DROP CONSTRAINT benchmarks_visibility_check,
    DROP COLUMN deleted_at,
    DROP COLUMN visibility;
