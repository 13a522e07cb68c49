-- Agents with least privilege. A GPU node is less trusted than the web
-- server: each agentd logs in with a role of its own (`ruckus agent create
-- NAME`), a member of the group role ruckus_agent, and PostgreSQL itself
-- limits that group to what an agent does:
--   - River: jobs and queue rows of the queues its agent row declares, and
--     inserting score_run jobs for the runs it holds;
--   - its own agent row (bound to the login role by agents.db_role), and
--     the hardware profile facts it reports (never prices);
--   - runs it holds, or may claim (a running job of one of its queues whose
--     run no other agent holds), with only the columns an agent writes;
--   - the dataset items (never the references) of the runs it is working;
--   - results, samples and events of the runs it holds.
-- Users, sessions, API tokens, server secrets, datasets, models and every
-- other run stay out of reach. The server connects as the tables' owner,
-- which row-level security does not restrict.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ruckus_agent') THEN
        BEGIN
            CREATE ROLE ruckus_agent NOLOGIN;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'the agents'' group role "ruckus_agent" does not exist and % may not create roles: run `ruckus migrate up` as a role with CREATEROLE, or have an administrator run CREATE ROLE ruckus_agent NOLOGIN first', current_user;
        WHEN unique_violation OR duplicate_object THEN
            -- Created meanwhile by a migration of another database of
            -- the cluster (roles are cluster-wide): it is there.
            NULL;
        END;
    END IF;
END $$;

-- The login role an agent row belongs to; NULL for agents that connect as
-- the server's own role (a single-machine setup).
ALTER TABLE agents ADD COLUMN db_role text;
CREATE UNIQUE INDEX agents_db_role_key ON agents (db_role) WHERE db_role IS NOT NULL;

-- Who is asking, and what they hold. SECURITY DEFINER so that the policies
-- below can ask without the agent being able to read the tables; each
-- function's search_path is pinned (schema, then pg_temp last) so a
-- temporary table cannot stand in for a real one.
CREATE FUNCTION ruckus_agent_id() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT id FROM agents WHERE db_role = session_user $$;

-- The River queues the agent's row declares (profile × runtime, as
-- jobs.Queue names them).
CREATE FUNCTION ruckus_agent_queues() RETURNS SETOF text
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT a.hardware_profile || '_' || rt FROM agents a, unnest(a.runtimes) AS rt
          WHERE a.db_role = session_user AND a.hardware_profile IS NOT NULL $$;

-- Runs the agent holds (or held: its finished runs).
CREATE FUNCTION ruckus_agent_runs() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT id FROM runs WHERE agent_id = (SELECT id FROM agents WHERE db_role = session_user) $$;

-- Runs the agent may claim: queued or running under a River job that is
-- running in one of its queues, and held by no other agent.
CREATE FUNCTION ruckus_agent_claimable() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT r.id FROM runs r JOIN river_job j ON j.id = r.river_job_id
          WHERE j.state = 'running' AND r.state IN ('queued', 'running')
            AND (r.agent_id IS NULL OR r.agent_id = (SELECT id FROM agents WHERE db_role = session_user))
            AND j.queue IN (SELECT a.hardware_profile || '_' || rt FROM agents a, unnest(a.runtimes) AS rt
                            WHERE a.db_role = session_user AND a.hardware_profile IS NOT NULL) $$;

-- Datasets of the runs the agent is working now.
CREATE FUNCTION ruckus_agent_datasets() RETURNS SETOF bigint
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
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ruckus_agent', f);
    END LOOP;
END $$;

-- The schema version agentd checks before it starts.
GRANT SELECT ON schema_migrations TO ruckus_agent;

-- Its own agent row. An agent can only update the row bound to its login
-- role (drain and deactivation are the administrators'), and cannot add
-- another: `ruckus agent create` makes the row with the role, and a role
-- binds one row at most (agents_db_role_key).
ALTER TABLE agents ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_own_row ON agents TO ruckus_agent
    USING (db_role = session_user) WITH CHECK (db_role = session_user);
GRANT SELECT ON agents TO ruckus_agent;
GRANT INSERT (name, host, version, protocol_version, runtimes, capabilities, hardware_profile, db_role) ON agents TO ruckus_agent;
GRANT UPDATE (host, version, protocol_version, runtimes, capabilities, hardware_profile, state, started_at,
    last_heartbeat_at) ON agents TO ruckus_agent;

-- Hardware facts the agent detects; the price stays the administrators'.
GRANT SELECT (slug, gpu_name, gpu_count, gpu_memory_bytes, cpu_cores) ON hardware_profiles TO ruckus_agent;
GRANT INSERT (slug, gpu_name, gpu_count, gpu_memory_bytes, cpu_cores) ON hardware_profiles TO ruckus_agent;
GRANT UPDATE (gpu_name, gpu_count, gpu_memory_bytes, cpu_cores) ON hardware_profiles TO ruckus_agent;

-- Runs it holds or may claim, and only the columns a lease writes.
ALTER TABLE runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_held_runs ON runs TO ruckus_agent
    USING (id IN (SELECT ruckus_agent_runs()) OR id IN (SELECT ruckus_agent_claimable()))
    WITH CHECK (agent_id IS NULL OR agent_id = ruckus_agent_id());
GRANT SELECT ON runs TO ruckus_agent;
GRANT UPDATE (fence, agent_id, state, mode, waiting_for_agent, started_at, segment_started_at, resumed, completed, errors,
    prompt_tokens, output_tokens, measured_seconds, throughput, requests_per_s, eta_seconds, progress_at, stopped_by, error,
    finished_at, summary, gpu_summary, load_time_ms, runtime_log) ON runs TO ruckus_agent;

-- The benchmark of such a run: which dataset it reads, nothing else.
ALTER TABLE benchmarks ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_run_benchmarks ON benchmarks FOR SELECT TO ruckus_agent
    USING (id IN (SELECT benchmark_id FROM runs));
GRANT SELECT (id, dataset_id) ON benchmarks TO ruckus_agent;

-- The items of the datasets it is working on, without their references.
ALTER TABLE dataset_items ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_working_items ON dataset_items FOR SELECT TO ruckus_agent
    USING (dataset_id IN (SELECT ruckus_agent_datasets()));
GRANT SELECT (dataset_id, idx, custom_id, request) ON dataset_items TO ruckus_agent;

-- Results, samples and events of the runs it holds.
ALTER TABLE results ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_read_results ON results FOR SELECT TO ruckus_agent
    USING (run_id IN (SELECT ruckus_agent_runs()));
CREATE POLICY agent_write_results ON results FOR INSERT TO ruckus_agent
    WITH CHECK (run_id IN (SELECT ruckus_agent_runs()) AND agent_id = ruckus_agent_id());
GRANT SELECT, INSERT ON results TO ruckus_agent;

-- (A sample is written ON CONFLICT (run_id, t) DO NOTHING, which reads the
-- arbiter columns.)
ALTER TABLE run_samples ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_read_samples ON run_samples FOR SELECT TO ruckus_agent
    USING (run_id IN (SELECT ruckus_agent_runs()));
CREATE POLICY agent_write_samples ON run_samples FOR INSERT TO ruckus_agent
    WITH CHECK (run_id IN (SELECT ruckus_agent_runs()));
GRANT SELECT (run_id, t), INSERT ON run_samples TO ruckus_agent;

ALTER TABLE run_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_write_events ON run_events FOR INSERT TO ruckus_agent
    WITH CHECK (agent_id = ruckus_agent_id()
        AND (run_id IN (SELECT ruckus_agent_runs()) OR run_id IN (SELECT ruckus_agent_claimable())));
GRANT INSERT (run_id, agent_id, kind, message) ON run_events TO ruckus_agent;

-- River, as a client that works jobs of its queues (leader election off:
-- no river_leader; no migrations). It inserts score_run jobs on the
-- server's queue for the runs it holds.
ALTER TABLE river_job ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_queue_jobs ON river_job TO ruckus_agent
    USING (queue IN (SELECT ruckus_agent_queues())) WITH CHECK (queue IN (SELECT ruckus_agent_queues()));
CREATE POLICY agent_score_jobs ON river_job FOR INSERT TO ruckus_agent
    WITH CHECK (kind = 'score_run' AND queue = 'server'
        AND CASE WHEN kind = 'score_run' THEN (args ->> 'run_id')::bigint END IN (SELECT ruckus_agent_runs()));
CREATE POLICY agent_read_score_jobs ON river_job FOR SELECT TO ruckus_agent
    USING (kind = 'score_run' AND queue = 'server'
        AND CASE WHEN kind = 'score_run' THEN (args ->> 'run_id')::bigint END IN (SELECT ruckus_agent_runs()));
GRANT SELECT, INSERT, UPDATE ON river_job TO ruckus_agent;
GRANT USAGE ON SEQUENCE river_job_id_seq TO ruckus_agent;

ALTER TABLE river_queue ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_own_queues ON river_queue TO ruckus_agent
    USING (name IN (SELECT ruckus_agent_queues())) WITH CHECK (name IN (SELECT ruckus_agent_queues()));
GRANT SELECT, INSERT, UPDATE ON river_queue TO ruckus_agent;
