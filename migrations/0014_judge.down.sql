DROP TABLE judgments;
DROP TABLE judge_runs;
DROP INDEX benchmarks_judges_run_id_idx;
ALTER TABLE benchmarks DROP COLUMN judges_run_id;
