-- The group role stays: roles belong to the whole cluster, and other
-- databases in it may use it.
DROP POLICY agent_own_queues ON river_queue;
ALTER TABLE river_queue DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON river_queue FROM ruckus_agent;

DROP POLICY agent_queue_jobs ON river_job;
DROP POLICY agent_score_jobs ON river_job;
DROP POLICY agent_read_score_jobs ON river_job;
ALTER TABLE river_job DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON river_job FROM ruckus_agent;
REVOKE ALL ON SEQUENCE river_job_id_seq FROM ruckus_agent;

DROP POLICY agent_write_events ON run_events;
ALTER TABLE run_events DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON run_events FROM ruckus_agent;

DROP POLICY agent_read_samples ON run_samples;
DROP POLICY agent_write_samples ON run_samples;
ALTER TABLE run_samples DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON run_samples FROM ruckus_agent;

DROP POLICY agent_read_results ON results;
DROP POLICY agent_write_results ON results;
ALTER TABLE results DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON results FROM ruckus_agent;

DROP POLICY agent_working_items ON dataset_items;
ALTER TABLE dataset_items DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON dataset_items FROM ruckus_agent;

DROP POLICY agent_run_benchmarks ON benchmarks;
ALTER TABLE benchmarks DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON benchmarks FROM ruckus_agent;

DROP POLICY agent_held_runs ON runs;
ALTER TABLE runs DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON runs FROM ruckus_agent;

REVOKE ALL ON hardware_profiles FROM ruckus_agent;

DROP POLICY agent_own_row ON agents;
ALTER TABLE agents DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON agents FROM ruckus_agent;

REVOKE ALL ON schema_migrations FROM ruckus_agent;

DROP FUNCTION ruckus_agent_datasets();
DROP FUNCTION ruckus_agent_claimable();
DROP FUNCTION ruckus_agent_runs();
DROP FUNCTION ruckus_agent_queues();
DROP FUNCTION ruckus_agent_id();

DROP INDEX agents_db_role_key;
ALTER TABLE agents DROP COLUMN db_role;
