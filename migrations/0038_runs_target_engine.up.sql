-- A target is model × runtime × hardware × engine settings
-- (docs/benchmarks.md#engine-settings): a run's history, its pace and its
-- previous comparable run are read per configuration, so the index they
-- read through holds the settings too.
DROP INDEX runs_target_idx;
CREATE INDEX runs_target_idx ON runs (model_id, runtime, hardware_profile, engine, finished_at) WHERE state = 'completed';
