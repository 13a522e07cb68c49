-- What an agent writes is bounded, its finished runs are out of its reach,
-- and the times that decide whether it is alive are the database's.
--
-- 1. Sizes. Every text and JSON value an agent may write has a CHECK on
--    its length (bytes), so that no agent can fill a column that the
--    server reads back into memory when it renders a page (60 MB in a
--    run's summary, GPU summary and log once made every view of it cost
--    the server hundreds of megabytes). The limits are far above what a
--    run writes: jobs/limits.go names them, agentd cuts what it sends to
--    them, and store maps each constraint to a message saying which value
--    was too long and the most kept. Lengths of text are read from the
--    value's header (octet_length does not decompress), JSON is measured
--    as text: its stored size is compressed and says nothing of what it
--    takes to render.
-- 2. Finished runs. An agent may write a run only while it is working it:
--    running, or cancelled by its user within the last 5 minutes while
--    the agent has not yet closed its segment (its last results and its
--    figures go in after a cancel). Results, samples and events likewise.
--    Once the agent ends its segment (finished, failed, cancelled, handed
--    back) the run is the server's alone; scoring and rescoring run as the
--    server, which no policy restricts.
-- 3. Times. The times by which the reaper decides that an agent is dead
--    (its heartbeat, the run's progress and segment start) and those that
--    date a run are set from now() by a trigger whenever an agent's role
--    writes them: a time in the future no longer keeps a dead agent's run.

-- 1. Sizes. Old rows longer than a limit are cut first so that every
--    constraint holds for every row (results: NOT VALID after the cut, to
--    spare the table a second full scan).
UPDATE runs SET runtime_log = right(runtime_log, 262144) WHERE octet_length(runtime_log) > 262144;
UPDATE runs SET error = left(error, 65536) WHERE octet_length(error) > 65536;
UPDATE runs SET summary = NULL WHERE octet_length(summary::text) > 1048576;
UPDATE runs SET gpu_summary = NULL WHERE octet_length(gpu_summary::text) > 65536;
ALTER TABLE runs
    ADD CONSTRAINT runs_error_length CHECK (octet_length(error) <= 65536),
    ADD CONSTRAINT runs_stopped_by_length CHECK (octet_length(stopped_by) <= 256),
    ADD CONSTRAINT runs_mode_length CHECK (octet_length(mode) <= 256),
    ADD CONSTRAINT runs_runtime_log_length CHECK (octet_length(runtime_log) <= 262144),
    ADD CONSTRAINT runs_summary_length CHECK (octet_length(summary::text) <= 1048576),
    ADD CONSTRAINT runs_gpu_summary_length CHECK (octet_length(gpu_summary::text) <= 65536);

UPDATE results SET output = left(output, 1048576) WHERE octet_length(output) > 1048576;
UPDATE results SET error = left(error, 65536) WHERE octet_length(error) > 65536;
UPDATE results SET itl_gaps_us = NULL, itl_tokens = NULL WHERE cardinality(itl_gaps_us) > 1048576;
ALTER TABLE results
    ADD CONSTRAINT results_output_length CHECK (octet_length(output) <= 1048576) NOT VALID,
    ADD CONSTRAINT results_error_length CHECK (octet_length(error) <= 65536) NOT VALID,
    ADD CONSTRAINT results_custom_id_length CHECK (octet_length(custom_id) <= 1024) NOT VALID,
    ADD CONSTRAINT results_short_text_length CHECK (octet_length(finish_reason) <= 256 AND octet_length(request_id) <= 256
        AND octet_length(error_class) <= 256 AND octet_length(phase) <= 256) NOT VALID,
    ADD CONSTRAINT results_itl_gaps_length CHECK (cardinality(itl_gaps_us) <= 1048576) NOT VALID;

UPDATE run_events SET message = left(message, 4096) WHERE octet_length(message) > 4096;
ALTER TABLE run_events
    ADD CONSTRAINT run_events_kind_length CHECK (octet_length(kind) <= 64),
    ADD CONSTRAINT run_events_message_length CHECK (octet_length(message) <= 4096);

UPDATE agents SET host = left(host, 256) WHERE octet_length(host) > 256;
UPDATE agents SET version = left(version, 256) WHERE octet_length(version) > 256;
UPDATE agents SET capabilities = '{}' WHERE octet_length(capabilities::text) > 65536;
ALTER TABLE agents
    ADD CONSTRAINT agents_host_length CHECK (octet_length(host) <= 256),
    ADD CONSTRAINT agents_version_length CHECK (octet_length(version) <= 256),
    ADD CONSTRAINT agents_runtimes_length CHECK (cardinality(runtimes) <= 16 AND octet_length(array_to_string(runtimes, '')) <= 1024),
    ADD CONSTRAINT agents_declared_runtimes_length CHECK (cardinality(declared_runtimes) <= 16 AND octet_length(array_to_string(declared_runtimes, '')) <= 1024),
    ADD CONSTRAINT agents_declared_profile_length CHECK (octet_length(declared_profile) <= 256),
    ADD CONSTRAINT agents_capabilities_length CHECK (octet_length(capabilities::text) <= 65536);

ALTER TABLE hardware_profiles
    ADD CONSTRAINT hardware_profiles_slug_length CHECK (octet_length(slug) <= 256) NOT VALID,
    ADD CONSTRAINT hardware_profiles_gpu_name_length CHECK (octet_length(gpu_name) <= 256) NOT VALID;

-- River's rows an agent writes: its jobs' completion (errors, metadata),
-- the score_run jobs it queues (args), its queues' rows (metadata).
ALTER TABLE river_job
    ADD CONSTRAINT ruckus_river_job_args_length CHECK (octet_length(args::text) <= 1048576) NOT VALID,
    ADD CONSTRAINT ruckus_river_job_metadata_length CHECK (octet_length(metadata::text) <= 262144) NOT VALID,
    ADD CONSTRAINT ruckus_river_job_errors_length CHECK (octet_length(errors::text) <= 1048576) NOT VALID;
ALTER TABLE river_queue
    ADD CONSTRAINT ruckus_river_queue_metadata_length CHECK (octet_length(metadata::text) <= 65536) NOT VALID;

-- 2. Finished runs. The runs an agent may still write: those it works now
-- (as on the row itself in agent_write_runs below).
CREATE FUNCTION ruckus_agent_open_runs() RETURNS SETOF bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    AS $$
DECLARE
    me bigint := ruckus_agent_id();
BEGIN
    RETURN QUERY SELECT id FROM runs WHERE agent_id = me
        AND (state = 'running' OR (state = 'cancelled' AND segment_started_at IS NOT NULL AND finished_at > now() - interval '5 minutes'));
END $$;
REVOKE ALL ON FUNCTION ruckus_agent_open_runs() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ruckus_agent_open_runs() TO ruckus_agent;
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION ruckus_agent_open_runs() SET search_path = %I, pg_temp', current_schema());
END $$;

-- It reads the runs it holds or held and those it may claim; it writes
-- only those it works now, and claims.
DROP POLICY agent_held_runs ON runs;
CREATE POLICY agent_read_runs ON runs FOR SELECT TO ruckus_agent
    USING (agent_id = (SELECT ruckus_agent_id()) OR id IN (SELECT ruckus_agent_claimable()));
CREATE POLICY agent_write_runs ON runs FOR UPDATE TO ruckus_agent
    USING ((agent_id = (SELECT ruckus_agent_id())
            AND (state = 'running' OR (state = 'cancelled' AND segment_started_at IS NOT NULL AND finished_at > now() - interval '5 minutes')))
        OR id IN (SELECT ruckus_agent_claimable()))
    WITH CHECK (agent_id IS NULL OR agent_id = (SELECT ruckus_agent_id()));

ALTER POLICY agent_write_results ON results
    WITH CHECK (run_id IN (SELECT ruckus_agent_open_runs()) AND agent_id = (SELECT ruckus_agent_id()));
ALTER POLICY agent_write_samples ON run_samples
    WITH CHECK (run_id IN (SELECT ruckus_agent_open_runs()));
ALTER POLICY agent_write_events ON run_events
    WITH CHECK (agent_id = (SELECT ruckus_agent_id())
        AND (run_id IN (SELECT ruckus_agent_open_runs()) OR run_id IN (SELECT ruckus_agent_claimable())));

-- 3. Times, and the end of a segment. For an agent only (a member of
-- ruckus_agent that names an agent: a superuser, or the role that made
-- ruckus_agent, is a member of it too): the server's own writes (the
-- reaper's hand-on, a user's cancel, a retry) keep what they say.
CREATE FUNCTION ruckus_agent_run_write() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.progress_at IS DISTINCT FROM OLD.progress_at THEN
        NEW.progress_at := now();
    END IF;
    IF NEW.segment_started_at IS DISTINCT FROM OLD.segment_started_at AND NEW.segment_started_at IS NOT NULL THEN
        NEW.segment_started_at := now();
    END IF;
    IF NEW.started_at IS DISTINCT FROM OLD.started_at THEN
        NEW.started_at := coalesce(OLD.started_at, now());
    END IF;
    -- A user's cancel stands, whatever the agent then says.
    IF OLD.state = 'cancelled' THEN
        NEW.state := 'cancelled';
    END IF;
    IF NEW.state IN ('queued', 'running') THEN
        NEW.finished_at := OLD.finished_at;
    ELSE
        NEW.finished_at := coalesce(OLD.finished_at, now());
        -- The agent ends the run: its segment is closed, and with it the
        -- run to the agent (agent_write_runs).
        IF NEW.state IS DISTINCT FROM OLD.state THEN
            NEW.segment_started_at := NULL;
        END IF;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER runs_agent_write BEFORE UPDATE ON runs FOR EACH ROW
    WHEN (pg_has_role(current_user, 'ruckus_agent', 'MEMBER') AND ruckus_agent_id() IS NOT NULL)
    EXECUTE FUNCTION ruckus_agent_run_write();

CREATE FUNCTION ruckus_agent_row_write() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.last_heartbeat_at IS DISTINCT FROM OLD.last_heartbeat_at THEN
        NEW.last_heartbeat_at := now();
    END IF;
    IF NEW.started_at IS DISTINCT FROM OLD.started_at THEN
        NEW.started_at := now();
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER agents_agent_write BEFORE UPDATE ON agents FOR EACH ROW
    WHEN (pg_has_role(current_user, 'ruckus_agent', 'MEMBER') AND ruckus_agent_id() IS NOT NULL)
    EXECUTE FUNCTION ruckus_agent_row_write();

-- Times an agent wrote before this migration come back to the present.
UPDATE agents SET last_heartbeat_at = now() WHERE last_heartbeat_at > now();
UPDATE agents SET started_at = now() WHERE started_at > now();
UPDATE runs SET progress_at = now() WHERE progress_at > now();
UPDATE runs SET segment_started_at = now() WHERE segment_started_at > now();
