-- The agents' boundary where PostgreSQL grants no privilege to take away.
-- Migration 0010 fenced the tables; an agent's connection could still
-- reach other agents and the server around them:
--   1. what an agent serves followed its own row: it could declare any
--      runtime and hardware profile and so take (and read the prompts of)
--      runs of queues it was never meant to serve. Now the server grants
--      them (`ruckus agent create NAME --runtime … --hardware …`, or an
--      administrator's approval of what a new agent declares): the
--      agent's columns hardware_profile and runtimes, which its queues and
--      the server's offers read, are written by the server alone, and
--      what the agent detects goes into declared_profile and
--      declared_runtimes;
--   2. River cancels a running job whose row says cancel_attempted_at,
--      and any agent of a queue could write that into another agent's
--      job (and pause the queue for every agent in river_queue). An agent
--      now updates only the available jobs of its queues (its fetch) and
--      the jobs it fetched itself, which the database records
--      (ruckus_locked_by, set by a trigger, never by the agent), and
--      never a queue's pause;
--   3. every role may signal its own role's backends and take any
--      advisory lock: one pooled agent could cancel or end every other
--      pooled agent's statements (they share ruckus_agent_pool), and hold
--      the locks the server waits on. Where this migration runs as a
--      superuser those functions are taken from PUBLIC and given back to
--      the server's role (the tables' owner) only;
--   4. a role may change its own session defaults (ALTER ROLE … SET),
--      which every later login of ruckus_agent_pool would start with.
--      PgBouncer's first statement on each server connection is now
--      CALL ruckus_agent_pool_login(), which removes such defaults and
--      refuses the session that began with them. (The pool role may also
--      change its own password: its server login must not depend on one,
--      see docs/scaling.md#running-agents-through-pgbouncer.)

-- 1. Granted, not declared.
ALTER TABLE agents ADD COLUMN declared_profile text;
ALTER TABLE agents ADD COLUMN declared_runtimes text[] NOT NULL DEFAULT '{}';
-- Set by the server for agents it trusts on their first registration
-- (`ruckus dev`'s own agent): the first declaration becomes the grant.
ALTER TABLE agents ADD COLUMN grant_on_register boolean NOT NULL DEFAULT false;
-- Agents registered before this migration keep what they serve: their
-- declaration at the time of the upgrade is taken as granted.
UPDATE agents SET declared_profile = hardware_profile, declared_runtimes = runtimes;

REVOKE INSERT (runtimes, hardware_profile), UPDATE (runtimes, hardware_profile) ON agents FROM ruckus_agent;
GRANT INSERT (declared_runtimes, declared_profile), UPDATE (declared_runtimes, declared_profile) ON agents TO ruckus_agent;
-- A profile an agent reports is added for an administrator to see (and
-- grant); the facts of a profile, once there, are no agent's to rewrite.
REVOKE UPDATE ON hardware_profiles FROM ruckus_agent;

-- An agent that connects with the server's own role (no role of its own,
-- a single machine one trusts) could write any column anyway: what it
-- declares is what it serves.
CREATE FUNCTION ruckus_grant_declared() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    NEW.hardware_profile := NEW.declared_profile;
    NEW.runtimes := NEW.declared_runtimes;
    NEW.grant_on_register := false;
    RETURN NEW;
END $$;
CREATE TRIGGER agents_grant_declared_insert BEFORE INSERT ON agents
    FOR EACH ROW WHEN (NEW.db_role IS NULL AND NEW.declared_profile IS NOT NULL)
    EXECUTE FUNCTION ruckus_grant_declared();
CREATE TRIGGER agents_grant_declared_update BEFORE UPDATE ON agents
    FOR EACH ROW WHEN ((OLD.grant_on_register AND NEW.declared_profile IS NOT NULL)
                       OR (NEW.db_role IS NULL AND (NEW.declared_profile IS DISTINCT FROM OLD.declared_profile
                                                    OR NEW.declared_runtimes IS DISTINCT FROM OLD.declared_runtimes)))
    EXECUTE FUNCTION ruckus_grant_declared();

-- 2. The job an agent fetched is the job it may finish.
ALTER TABLE river_job ADD COLUMN ruckus_locked_by bigint;

CREATE FUNCTION ruckus_river_job_locked_by() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.ruckus_locked_by := NULL;
    ELSIF OLD.state = 'available' AND NEW.state = 'running' THEN
        -- The fetch: the agent taking it, or none for the server.
        NEW.ruckus_locked_by := ruckus_agent_id();
    ELSE
        NEW.ruckus_locked_by := OLD.ruckus_locked_by;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER river_job_locked_by_insert BEFORE INSERT ON river_job
    FOR EACH ROW WHEN (NEW.ruckus_locked_by IS NOT NULL)
    EXECUTE FUNCTION ruckus_river_job_locked_by();
CREATE TRIGGER river_job_locked_by_update BEFORE UPDATE ON river_job
    FOR EACH ROW WHEN ((OLD.state = 'available' AND NEW.state = 'running')
                       OR NEW.ruckus_locked_by IS DISTINCT FROM OLD.ruckus_locked_by)
    EXECUTE FUNCTION ruckus_river_job_locked_by();

-- Reading the jobs of its queues as before; inserting only score_run
-- jobs (agent_score_jobs); updating an available job (the fetch, which
-- must leave it running and its own) or a running job it fetched.
DROP POLICY agent_queue_jobs ON river_job;
CREATE POLICY agent_queue_jobs ON river_job FOR SELECT TO ruckus_agent
    USING (queue IN (SELECT ruckus_agent_queues()));
CREATE POLICY agent_fetched_jobs ON river_job FOR UPDATE TO ruckus_agent
    USING (queue IN (SELECT ruckus_agent_queues())
           AND (state = 'available' OR (state = 'running' AND ruckus_locked_by = (SELECT ruckus_agent_id()))))
    WITH CHECK (queue IN (SELECT ruckus_agent_queues()) AND ruckus_locked_by = (SELECT ruckus_agent_id()));

-- A queue's row: an agent adds it unpaused and keeps it fresh; pausing
-- and its metadata are the server's.
DROP POLICY agent_own_queues ON river_queue;
CREATE POLICY agent_own_queues ON river_queue FOR SELECT TO ruckus_agent
    USING (name IN (SELECT ruckus_agent_queues()));
CREATE POLICY agent_add_queues ON river_queue FOR INSERT TO ruckus_agent
    WITH CHECK (name IN (SELECT ruckus_agent_queues()) AND paused_at IS NULL AND metadata = '{}');
CREATE POLICY agent_touch_queues ON river_queue FOR UPDATE TO ruckus_agent
    USING (name IN (SELECT ruckus_agent_queues())) WITH CHECK (name IN (SELECT ruckus_agent_queues()));
REVOKE UPDATE ON river_queue FROM ruckus_agent;
GRANT UPDATE (updated_at) ON river_queue TO ruckus_agent;

-- 3. Signals and advisory locks: the server's alone, where we may say so.
DO $$
DECLARE
    f text;
    server_role text := (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'agents'::regclass);
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'not a superuser: agents keep pg_cancel_backend, pg_terminate_backend and the advisory lock functions (run `ruckus migrate up` as a superuser to take them away, see docs/gpu-nodes.md)';
        RETURN;
    END IF;
    FOREACH f IN ARRAY ARRAY['pg_cancel_backend(integer)', 'pg_terminate_backend(integer, bigint)',
        'pg_advisory_lock(bigint)', 'pg_advisory_lock(integer, integer)',
        'pg_advisory_lock_shared(bigint)', 'pg_advisory_lock_shared(integer, integer)',
        'pg_try_advisory_lock(bigint)', 'pg_try_advisory_lock(integer, integer)',
        'pg_try_advisory_lock_shared(bigint)', 'pg_try_advisory_lock_shared(integer, integer)',
        'pg_advisory_xact_lock(bigint)', 'pg_advisory_xact_lock(integer, integer)',
        'pg_advisory_xact_lock_shared(bigint)', 'pg_advisory_xact_lock_shared(integer, integer)',
        'pg_try_advisory_xact_lock(bigint)', 'pg_try_advisory_xact_lock(integer, integer)',
        'pg_try_advisory_xact_lock_shared(bigint)', 'pg_try_advisory_xact_lock_shared(integer, integer)'] LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, server_role);
    END LOOP;
END $$;

-- 4. A pooled server session starts with no defaults an agent gave the
-- pool role. PgBouncer's first statements on every server connection it
-- opens (pgbouncer.PoolLogin; it goes on with the connection whatever
-- they answer) lift the settings that would stop them (read-only, the
-- timeouts, search_path), commit, and call these two, each in a
-- transaction of its own: the first removes the role's defaults (a role
-- may always reset its own) and marks the session that began with them;
-- the second, once that is committed, ends the marked session, so that
-- the pool's next login is clean.
CREATE FUNCTION ruckus_agent_pool_reset() RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF session_user <> 'ruckus_agent_pool' THEN
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole
                   WHERE r.rolname = 'ruckus_agent_pool'
                     AND s.setdatabase IN (0, (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())))
       AND NOT EXISTS (SELECT 1 FROM pg_settings WHERE source IN ('user', 'database user')) THEN
        RETURN;
    END IF;
    ALTER ROLE ruckus_agent_pool RESET ALL;
    EXECUTE format('ALTER ROLE ruckus_agent_pool IN DATABASE %I RESET ALL', current_database());
    PERFORM set_config('ruckus.pool_session_tainted', 'on', false);
END $$;

CREATE FUNCTION ruckus_agent_pool_end_tainted() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    IF session_user = 'ruckus_agent_pool' AND current_setting('ruckus.pool_session_tainted', true) = 'on' THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
    END IF;
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION ruckus_agent_pool_reset() SET search_path = pg_catalog, %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION ruckus_agent_pool_end_tainted() SET search_path = pg_catalog, %I, pg_temp', current_schema());
END $$;
-- Every role may call them (PgBouncer's own lookup role opens sessions
-- through the same pool entry); they do nothing but for the pool role.
GRANT EXECUTE ON FUNCTION ruckus_agent_pool_reset() TO PUBLIC;
GRANT EXECUTE ON FUNCTION ruckus_agent_pool_end_tainted() TO PUBLIC;
