-- The look for runs whose concluding job was given up
-- (store.GivenUpUnconcluded, every 30 s) asks whether a newer
-- conclude_run or execute_run of the same run exists; score_run has its
-- index (migration 0032), these two kinds get theirs, so the look stays
-- an index probe per run however many jobs the queue keeps.
CREATE INDEX river_job_conclude_exec_run_idx ON river_job (((args ->> 'run_id'))) WHERE kind IN ('conclude_run', 'execute_run');
