ALTER TABLE runs DROP CONSTRAINT runs_state_check;
UPDATE runs SET state = 'succeeded' WHERE state = 'completed';
UPDATE run_events SET kind = 'succeeded' WHERE kind = 'completed';
ALTER TABLE runs ADD CONSTRAINT runs_state_check CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled'));
