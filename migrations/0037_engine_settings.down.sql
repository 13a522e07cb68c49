ALTER TABLE run_samples DROP COLUMN preemptions;
ALTER TABLE runs DROP COLUMN engine;
