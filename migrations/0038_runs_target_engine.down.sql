DROP INDEX runs_target_idx;
CREATE INDEX runs_target_idx ON runs (model_id, runtime, hardware_profile, finished_at) WHERE state = 'completed';
