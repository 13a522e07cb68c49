-- The shared pool role's cures of migrations 0023 and 0030, as they were;
-- the role stays NOLOGIN until an earlier `ruckus pgbouncer --setup-auth`
-- gives it a password again.

CREATE FUNCTION ruckus_agent_pool_end_tainted() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    IF session_user = 'ruckus_agent_pool' AND current_setting('ruckus.pool_session_tainted', true) = 'on' THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
    END IF;
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION ruckus_agent_pool_end_tainted() SET search_path = pg_catalog, %I, pg_temp', current_schema());
END $$;
GRANT EXECUTE ON FUNCTION ruckus_agent_pool_end_tainted() TO PUBLIC;

CREATE TABLE ruckus_agent_pool_taint (
    id boolean PRIMARY KEY DEFAULT true CONSTRAINT ruckus_agent_pool_taint_one_row CHECK (id),
    -- when defaults were last found on the pool role and removed
    seen_at timestamptz NOT NULL,
    -- the seen_at whose sessions the sweep has ended
    handled_at timestamptz
);
REVOKE ALL ON ruckus_agent_pool_taint FROM PUBLIC;

CREATE FUNCTION ruckus_agent_pool_note_taint() RETURNS void
    LANGUAGE sql SECURITY DEFINER AS $$
    INSERT INTO ruckus_agent_pool_taint (seen_at) VALUES (clock_timestamp())
    ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at
$$;
-- Any role may note one (the login's reset runs as the pool role): a false
-- note only makes the next sweep end the pooled sessions once.
GRANT EXECUTE ON FUNCTION ruckus_agent_pool_note_taint() TO PUBLIC;

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
    PERFORM ruckus_agent_pool_note_taint();
    PERFORM set_config('ruckus.pool_session_tainted', 'on', false);
END $$;

-- The number of pooled sessions it ended; 0 also where it may not act.
CREATE FUNCTION ruckus_agent_pool_sweep() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    t ruckus_agent_pool_taint;
    ended integer;
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RETURN 0;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_db_role_setting s
               WHERE s.setrole = 'ruckus_agent_pool'::regrole
                 AND s.setdatabase IN (0, (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()))) THEN
        ALTER ROLE ruckus_agent_pool RESET ALL;
        EXECUTE format('ALTER ROLE ruckus_agent_pool IN DATABASE %I RESET ALL', current_database());
        PERFORM ruckus_agent_pool_note_taint();
    END IF;
    SELECT * INTO t FROM ruckus_agent_pool_taint;
    IF NOT FOUND OR t.seen_at <= t.handled_at THEN
        RETURN 0;
    END IF;
    SELECT count(*) FILTER (WHERE pg_terminate_backend(a.pid)) INTO ended
      FROM pg_stat_activity a
     WHERE a.usename = 'ruckus_agent_pool' AND a.datname = current_database()
       AND a.backend_start <= t.seen_at AND a.pid <> pg_backend_pid();
    UPDATE ruckus_agent_pool_taint SET handled_at = t.seen_at;
    RETURN ended;
END $$;
REVOKE ALL ON FUNCTION ruckus_agent_pool_sweep() FROM PUBLIC;

DO $$
DECLARE
    server_role text := (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'agents'::regclass);
BEGIN
    EXECUTE format('ALTER FUNCTION ruckus_agent_pool_note_taint() SET search_path = pg_catalog, %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION ruckus_agent_pool_sweep() SET search_path = pg_catalog, %I, pg_temp', current_schema());
    EXECUTE format('GRANT EXECUTE ON FUNCTION ruckus_agent_pool_sweep() TO %I', server_role);
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION ruckus_agent_pool_reset() SET search_path = pg_catalog, %I, pg_temp', current_schema());
END $$;
GRANT EXECUTE ON FUNCTION ruckus_agent_pool_reset() TO PUBLIC;
