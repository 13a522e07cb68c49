-- Back to migration 0020's SQL functions and policies.
ALTER POLICY agent_run_benchmarks ON benchmarks
    USING (id IN (SELECT benchmark_id FROM runs));
ALTER POLICY agent_held_runs ON runs
    USING (id IN (SELECT ruckus_agent_runs()) OR id IN (SELECT ruckus_agent_claimable()));
DROP FUNCTION ruckus_agent_benchmarks();

CREATE OR REPLACE FUNCTION ruckus_agent_id() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT id FROM agents WHERE session_user <> 'ruckus_agent_pool' AND db_role = session_user
          UNION ALL
          SELECT id FROM agents WHERE session_user = 'ruckus_agent_pool'
             AND key_hash = sha256(convert_to(nullif(current_setting('ruckus.agent_key', true), ''), 'UTF8')) $$;

CREATE OR REPLACE FUNCTION ruckus_agent_queues() RETURNS SETOF text
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT a.hardware_profile || '_' || rt FROM agents a, unnest(a.runtimes) AS rt
          WHERE a.id = (SELECT ruckus_agent_id()) AND a.hardware_profile IS NOT NULL $$;

CREATE OR REPLACE FUNCTION ruckus_agent_runs() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT id FROM runs WHERE agent_id = (SELECT ruckus_agent_id()) $$;

CREATE OR REPLACE FUNCTION ruckus_agent_claimable() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT r.id FROM runs r JOIN river_job j ON j.id = r.river_job_id
          WHERE j.state = 'running' AND r.state IN ('queued', 'running')
            AND (r.agent_id IS NULL OR r.agent_id = (SELECT ruckus_agent_id()))
            AND j.queue IN (SELECT ruckus_agent_queues()) $$;

CREATE OR REPLACE FUNCTION ruckus_agent_datasets() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
          WHERE r.state = 'running' AND r.agent_id = (SELECT ruckus_agent_id()) $$;

CREATE OR REPLACE FUNCTION ruckus_agent_role() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT db_role FROM agents WHERE id = (SELECT ruckus_agent_id()) $$;

DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['ruckus_agent_id()', 'ruckus_agent_queues()', 'ruckus_agent_runs()',
                              'ruckus_agent_claimable()', 'ruckus_agent_datasets()', 'ruckus_agent_role()'] LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
END $$;

DROP INDEX ruckus_river_job_available_idx;
DROP INDEX runs_river_job_id_idx;
DROP INDEX runs_agent_id_idx;
