DROP FUNCTION ruckus_agent_pool_sweep();

CREATE OR REPLACE FUNCTION ruckus_agent_pool_reset() RETURNS void
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


DROP FUNCTION ruckus_agent_pool_note_taint();
DROP TABLE ruckus_agent_pool_taint;
