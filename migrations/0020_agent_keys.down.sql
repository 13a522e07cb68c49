-- The pooled role stays: roles belong to the whole cluster, and other
-- databases in it may use it.
ALTER POLICY agent_held_runs ON runs
    WITH CHECK (agent_id IS NULL OR agent_id = ruckus_agent_id());
ALTER POLICY agent_write_results ON results
    WITH CHECK (run_id IN (SELECT ruckus_agent_runs()) AND agent_id = ruckus_agent_id());
ALTER POLICY agent_write_events ON run_events
    WITH CHECK (agent_id = ruckus_agent_id()
        AND (run_id IN (SELECT ruckus_agent_runs()) OR run_id IN (SELECT ruckus_agent_claimable())));

DROP POLICY agent_own_row ON agents;
CREATE POLICY agent_own_row ON agents TO ruckus_agent
    USING (db_role = session_user) WITH CHECK (db_role = session_user);

REVOKE EXECUTE ON FUNCTION ruckus_agent_id() FROM PUBLIC;
DROP FUNCTION ruckus_agent_role();

CREATE OR REPLACE FUNCTION ruckus_agent_id() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT id FROM agents WHERE db_role = session_user $$;

CREATE OR REPLACE FUNCTION ruckus_agent_queues() RETURNS SETOF text
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT a.hardware_profile || '_' || rt FROM agents a, unnest(a.runtimes) AS rt
          WHERE a.db_role = session_user AND a.hardware_profile IS NOT NULL $$;

CREATE OR REPLACE FUNCTION ruckus_agent_runs() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT id FROM runs WHERE agent_id = (SELECT id FROM agents WHERE db_role = session_user) $$;

CREATE OR REPLACE FUNCTION ruckus_agent_claimable() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT r.id FROM runs r JOIN river_job j ON j.id = r.river_job_id
          WHERE j.state = 'running' AND r.state IN ('queued', 'running')
            AND (r.agent_id IS NULL OR r.agent_id = (SELECT id FROM agents WHERE db_role = session_user))
            AND j.queue IN (SELECT a.hardware_profile || '_' || rt FROM agents a, unnest(a.runtimes) AS rt
                            WHERE a.db_role = session_user AND a.hardware_profile IS NOT NULL) $$;

CREATE OR REPLACE FUNCTION ruckus_agent_datasets() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
          WHERE r.state = 'running' AND r.agent_id = (SELECT id FROM agents WHERE db_role = session_user) $$;

DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['ruckus_agent_id()', 'ruckus_agent_queues()', 'ruckus_agent_runs()',
                              'ruckus_agent_claimable()', 'ruckus_agent_datasets()'] LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
END $$;

DROP INDEX agents_key_hash_key;
ALTER TABLE agents DROP COLUMN key_hash;
