-- One pool login per agent. PgBouncer no longer logs in to PostgreSQL as
-- the shared role ruckus_agent_pool: it keeps a pool per agent and logs in
-- as that agent's own role (docs/scaling.md#one-pool-login-per-agent), so
-- the defaults and the password an agent may give its own role reach its
-- own sessions alone. The shared role logs in no more and keeps no
-- defaults; what cured its defaults (the connect query's reset of
-- migration 0023 and the reaper's sweep of migration 0030) has nothing
-- left to cure and goes.

DROP FUNCTION ruckus_agent_pool_sweep();
DROP FUNCTION ruckus_agent_pool_note_taint();
DROP TABLE ruckus_agent_pool_taint;
DROP FUNCTION ruckus_agent_pool_end_tainted();
DROP FUNCTION ruckus_agent_pool_reset();

-- Altering another role takes CREATEROLE; `ruckus pgbouncer --setup-auth`
-- (a superuser) does the same where this migration may not. The role is
-- the cluster's: each change is made only where still needed, since the
-- migrations of other databases of the cluster may be making it at the
-- same moment (two ALTERs of one role at once fail).
DO $$
BEGIN
    IF (SELECT rolcanlogin FROM pg_roles WHERE rolname = 'ruckus_agent_pool') THEN
        EXECUTE 'ALTER ROLE ruckus_agent_pool NOLOGIN PASSWORD NULL';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_db_role_setting WHERE setrole = 'ruckus_agent_pool'::regrole AND setdatabase = 0) THEN
        EXECUTE 'ALTER ROLE ruckus_agent_pool RESET ALL';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
               WHERE s.setrole = 'ruckus_agent_pool'::regrole AND d.datname = current_database()) THEN
        EXECUTE format('ALTER ROLE ruckus_agent_pool IN DATABASE %I RESET ALL', current_database());
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE '% may not alter ruckus_agent_pool: `ruckus pgbouncer --setup-auth` makes it NOLOGIN', current_user;
END $$;
