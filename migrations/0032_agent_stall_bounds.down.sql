DROP TRIGGER IF EXISTS river_job_agent_score_once ON river_job;
DROP FUNCTION IF EXISTS ruckus_agent_score_job_once();
DROP INDEX IF EXISTS river_job_score_run_idx;
DROP FUNCTION IF EXISTS ruckus_agent_sweep_stalled(interval, interval);
DO $$
DECLARE
    r text;
BEGIN
    FOR r IN SELECT db_role FROM agents WHERE db_role IS NOT NULL AND db_role IN (SELECT rolname FROM pg_roles) LOOP
        BEGIN
            EXECUTE format('ALTER ROLE %I RESET idle_in_transaction_session_timeout', r);
            EXECUTE format('ALTER ROLE %I RESET statement_timeout', r);
        EXCEPTION WHEN insufficient_privilege THEN
            NULL;
        END;
    END LOOP;
END $$;
