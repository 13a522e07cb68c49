ALTER TABLE run_regressions DROP COLUMN detail_said;
