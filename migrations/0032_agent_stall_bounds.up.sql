-- No agent may stall the others (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
--   1. An agent's transaction may stay open, holding the row of the run it
--      works (SELECT … FOR UPDATE), for as long as the agent likes, and a
--      statement may run as long: its login role now starts with bounded
--      idle_in_transaction_session_timeout and statement_timeout (set here
--      for the agent roles that exist, by `ruckus agent create` for new
--      ones). A role may change its own defaults and a session its own
--      settings, so these bind only honest agents; what binds every agent
--      is the server's sweep, ruckus_agent_sweep_stalled(), which the
--      reaper calls every period: it ends agent sessions idle in a
--      transaction, or in one statement, for longer than the bound.
--   2. An agent may queue score_run jobs for its runs (the scoring of a
--      run it finished). Without a bound, thousands of them delayed every
--      other run's scoring, attestation and webhooks. Now an agent queues
--      at most one per end of a run: a score_run job an agent inserts is
--      refused unless the run is its own, has ended, and has no score_run
--      job queued since it ended (a user's rescoring included). The job
--      is dated by the database, not by the agent.

-- 1. Bounded time.
CREATE FUNCTION ruckus_agent_sweep_stalled(idle interval, statement interval) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    ended integer;
BEGIN
    IF NOT (SELECT rolsuper OR pg_has_role(current_user, 'pg_signal_backend', 'MEMBER') FROM pg_roles WHERE rolname = current_user) THEN
        RETURN 0;
    END IF;
    SELECT count(*) FILTER (WHERE pg_terminate_backend(a.pid)) INTO ended
      FROM pg_stat_activity a
     WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
       AND a.usesysid IS NOT NULL AND pg_has_role(a.usesysid, 'ruckus_agent', 'MEMBER')
       AND NOT (SELECT rolsuper FROM pg_roles WHERE oid = a.usesysid)
       AND ((a.state IN ('idle in transaction', 'idle in transaction (aborted)') AND a.state_change < clock_timestamp() - idle)
            OR (a.state = 'active' AND a.query_start < clock_timestamp() - statement));
    RETURN ended;
END $$;
REVOKE ALL ON FUNCTION ruckus_agent_sweep_stalled(interval, interval) FROM PUBLIC;

DO $$
DECLARE
    server_role text := (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'agents'::regclass);
    r text;
BEGIN
    EXECUTE format('ALTER FUNCTION ruckus_agent_sweep_stalled(interval, interval) SET search_path = pg_catalog, %I, pg_temp', current_schema());
    EXECUTE format('GRANT EXECUTE ON FUNCTION ruckus_agent_sweep_stalled(interval, interval) TO %I', server_role);
    -- The agents' own login roles (not the pool's: its defaults are
    -- removed by the pool sweep, migration 0030; PgBouncer's connect query
    -- sets them per session instead).
    FOR r IN SELECT db_role FROM agents WHERE db_role IS NOT NULL AND db_role IN (SELECT rolname FROM pg_roles) LOOP
        BEGIN
            EXECUTE format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', r, '30s');
            EXECUTE format('ALTER ROLE %I SET statement_timeout = %L', r, '120s');
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'may not set the session defaults of agent role %: the reaper''s sweep still bounds its sessions', r;
        END;
    END LOOP;
END $$;

-- 2. One scoring per end of a run.
CREATE INDEX river_job_score_run_idx ON river_job (((args ->> 'run_id'))) WHERE kind = 'score_run';

CREATE FUNCTION ruckus_agent_score_job_once() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    me bigint := ruckus_agent_id();
    ended timestamptz;
BEGIN
    IF me IS NULL OR NEW.kind <> 'score_run' THEN
        RETURN NEW; -- not an agent's (or not a scoring): the policies decide
    END IF;
    -- Waits for an agent that is finishing the run; serialises a flood.
    SELECT finished_at INTO ended FROM runs
     WHERE id::text = NEW.args ->> 'run_id' AND agent_id = me FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NEW; -- not its run: the insert policy refuses it
    END IF;
    IF ended IS NULL THEN
        RAISE EXCEPTION 'run % has not ended: an agent queues its scoring when it ends it', NEW.args ->> 'run_id'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ruckus_agent_score_job_once';
    END IF;
    IF EXISTS (SELECT 1 FROM river_job j WHERE j.kind = 'score_run' AND j.args ->> 'run_id' = NEW.args ->> 'run_id'
                 AND j.created_at >= ended) THEN
        RAISE EXCEPTION 'run % is already queued for scoring since it ended', NEW.args ->> 'run_id'
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'ruckus_agent_score_job_once';
    END IF;
    NEW.created_at := now();
    NEW.scheduled_at := now();
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION ruckus_agent_score_job_once() FROM PUBLIC;
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION ruckus_agent_score_job_once() SET search_path = pg_catalog, %I, pg_temp', current_schema());
END $$;
CREATE TRIGGER river_job_agent_score_once BEFORE INSERT ON river_job
    FOR EACH ROW WHEN (NEW.kind = 'score_run')
    EXECUTE FUNCTION ruckus_agent_score_job_once();
