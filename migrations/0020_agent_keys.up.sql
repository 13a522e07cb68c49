-- Agents that share server connections. Through PgBouncer in transaction
-- pooling mode, PostgreSQL connections are shared only between clients of
-- the same server role, so a role per agent costs a connection per agent.
-- PgBouncer instead logs in to PostgreSQL as one role, ruckus_agent_pool
-- (its password known to PgBouncer alone), and each agent proves who it
-- is in every transaction with its key: a 256-bit secret made by
-- `ruckus agent create`, sent as set_config('ruckus.agent_key', $1, true)
-- and stored here only as its SHA-256. The policies of migration 0010 ask
-- ruckus_agent_id(), which now answers:
--   - for ruckus_agent_pool: the agent whose key the transaction carries
--     (none without one, so a transaction without a key sees nothing);
--   - for any other login (an agent connecting directly with its own
--     role): the agent bound to that role, as before; a key is ignored.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ruckus_agent_pool') THEN
        BEGIN
            -- NOLOGIN until `ruckus pgbouncer --setup-auth` gives it a
            -- password.
            CREATE ROLE ruckus_agent_pool NOLOGIN IN ROLE ruckus_agent;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'the pooled agents'' role "ruckus_agent_pool" does not exist and % may not create roles: run `ruckus migrate up` as a role with CREATEROLE, or have an administrator run CREATE ROLE ruckus_agent_pool NOLOGIN IN ROLE ruckus_agent first', current_user;
        WHEN unique_violation OR duplicate_object THEN
            -- Created meanwhile by a migration of another database of
            -- the cluster (roles are cluster-wide): it is there.
            NULL;
        END;
    END IF;
END $$;

ALTER TABLE agents ADD COLUMN key_hash bytea CHECK (length(key_hash) = 32);
CREATE UNIQUE INDEX agents_key_hash_key ON agents (key_hash) WHERE key_hash IS NOT NULL;

-- Each branch is an index lookup; session_user decides which one runs.
-- Callers ask it as (SELECT ruckus_agent_id()), once per statement: called
-- per row it would hash the key once per row.
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

-- The login role bound to the caller's agent, which names its row: an
-- agent registers with INSERT … ON CONFLICT DO UPDATE … RETURNING, and
-- PostgreSQL checks the row it proposes (whose id is not yet anyone's)
-- against the policy even when it updates instead.
CREATE FUNCTION ruckus_agent_role() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT db_role FROM agents WHERE id = (SELECT ruckus_agent_id()) $$;
REVOKE ALL ON FUNCTION ruckus_agent_role() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ruckus_agent_role() TO ruckus_agent;

-- CREATE OR REPLACE drops a function's SET clauses: pin search_path again.
DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['ruckus_agent_id()', 'ruckus_agent_queues()', 'ruckus_agent_runs()',
                              'ruckus_agent_claimable()', 'ruckus_agent_datasets()', 'ruckus_agent_role()'] LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
END $$;

-- Who am I, for anyone: it names only the caller's own agent (agentd asks
-- it before registering, whichever role it runs under).
GRANT EXECUTE ON FUNCTION ruckus_agent_id() TO PUBLIC;

-- Its own row, by the same identity: the row bound to its agent's role
-- (agents_db_role_key allows one row per binding, so it cannot add
-- another), and none for a caller with no agent.
DROP POLICY agent_own_row ON agents;
CREATE POLICY agent_own_row ON agents TO ruckus_agent
    USING (db_role = (SELECT ruckus_agent_role())) WITH CHECK (db_role = (SELECT ruckus_agent_role()));

-- The checks on rows an agent writes name it the same way, asked once per
-- statement rather than once per row (a key is hashed on every asking).
ALTER POLICY agent_held_runs ON runs
    WITH CHECK (agent_id IS NULL OR agent_id = (SELECT ruckus_agent_id()));
ALTER POLICY agent_write_results ON results
    WITH CHECK (run_id IN (SELECT ruckus_agent_runs()) AND agent_id = (SELECT ruckus_agent_id()));
ALTER POLICY agent_write_events ON run_events
    WITH CHECK (agent_id = (SELECT ruckus_agent_id())
        AND (run_id IN (SELECT ruckus_agent_runs()) OR run_id IN (SELECT ruckus_agent_claimable())));
