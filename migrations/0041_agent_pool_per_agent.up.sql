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
-- (a superuser) does the same where this migration may not.
DO $$
BEGIN
    EXECUTE 'ALTER ROLE ruckus_agent_pool NOLOGIN PASSWORD NULL';
    EXECUTE 'ALTER ROLE ruckus_agent_pool RESET ALL';
    EXECUTE format('ALTER ROLE ruckus_agent_pool IN DATABASE %I RESET ALL', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE '% may not alter ruckus_agent_pool: `ruckus pgbouncer --setup-auth` makes it NOLOGIN', current_user;
END $$;
