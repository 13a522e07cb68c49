-- A run that finished its work is "completed", the word the API, the
-- pages and the exports use (and the Benchmark Runner's API before them).
ALTER TABLE runs DROP CONSTRAINT runs_state_check;
UPDATE runs SET state = 'completed' WHERE state = 'succeeded';
UPDATE run_events SET kind = 'completed' WHERE kind = 'succeeded';
ALTER TABLE runs ADD CONSTRAINT runs_state_check CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelled'));
