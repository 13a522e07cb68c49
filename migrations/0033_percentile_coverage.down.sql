ALTER TABLE run_stats DROP COLUMN e2e_p95_coverage, DROP COLUMN ttft_p95_coverage;
