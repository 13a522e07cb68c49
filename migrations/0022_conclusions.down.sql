ALTER TABLE runs DROP COLUMN repeat;
ALTER TABLE benchmarks DROP COLUMN verdict_scorer_key;
DROP TABLE quality_pairs;
DROP TABLE run_qualities;
DROP TABLE run_stats;
