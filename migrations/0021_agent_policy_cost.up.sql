-- What an agent's every statement costs. Each statement on runs checks the
-- row against agent_held_runs, and each one on results, samples, events and
-- River's tables asks who the agent is and which runs it holds, through the
-- functions of migrations 0010 and 0020. Three things made that dear:
--   - they were SQL functions, which PostgreSQL parses and plans afresh
--     at every call when they cannot be inlined (and SECURITY DEFINER ones
--     never are): a statement paid for planning four to eight queries
--     besides its own. PL/pgSQL keeps each query's plan for the session;
--   - without an index on runs.agent_id, "the runs I hold" read the whole
--     runs table, once per statement, so an agent's statement cost grew
--     with every run ever made; without one on runs.river_job_id, so did
--     "the runs I may claim";
--   - the benchmarks policy read every run visible to the agent, checking
--     each against those functions;
--   - River's fetch, run by an agent under row-level security, could not
--     use River's fetching index (state, queue, …): PostgreSQL applies a
--     query's own conditions only after the policies unless their
--     functions are leakproof, and equality on the river_job_state enum is
--     not. The fetch read every job of its kind ever kept. A partial index
--     of the available jobs by queue serves it: its condition on queue
--     (text equality, leakproof) is an index condition, and the index's
--     predicate holds the state.

CREATE INDEX runs_agent_id_idx ON runs (agent_id) WHERE agent_id IS NOT NULL;
CREATE INDEX runs_river_job_id_idx ON runs (river_job_id) WHERE river_job_id IS NOT NULL;
CREATE INDEX ruckus_river_job_available_idx ON river_job (queue, priority, scheduled_at, id) WHERE state = 'available';

-- The same answers as migration 0020's, asked once per call.
CREATE OR REPLACE FUNCTION ruckus_agent_id() RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    AS $$
BEGIN
    IF session_user = 'ruckus_agent_pool' THEN
        RETURN (SELECT id FROM agents
                WHERE key_hash = sha256(convert_to(nullif(current_setting('ruckus.agent_key', true), ''), 'UTF8')));
    END IF;
    RETURN (SELECT id FROM agents WHERE db_role = session_user);
END $$;

CREATE OR REPLACE FUNCTION ruckus_agent_queues() RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    AS $$
DECLARE
    me bigint := ruckus_agent_id();
BEGIN
    RETURN QUERY SELECT a.hardware_profile || '_' || rt FROM agents a, unnest(a.runtimes) AS rt
        WHERE a.id = me AND a.hardware_profile IS NOT NULL;
END $$;

CREATE OR REPLACE FUNCTION ruckus_agent_runs() RETURNS SETOF bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    AS $$
DECLARE
    me bigint := ruckus_agent_id();
BEGIN
    RETURN QUERY SELECT id FROM runs WHERE agent_id = me;
END $$;

-- The running jobs of the agent's queues (River's fetching index leads
-- with state and queue), then their runs.
CREATE OR REPLACE FUNCTION ruckus_agent_claimable() RETURNS SETOF bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    AS $$
DECLARE
    me bigint := ruckus_agent_id();
    queues text[] := ARRAY(SELECT ruckus_agent_queues());
BEGIN
    RETURN QUERY SELECT r.id FROM river_job j JOIN runs r ON r.river_job_id = j.id
        WHERE j.state = 'running' AND j.queue = ANY (queues) AND r.state IN ('queued', 'running')
          AND (r.agent_id IS NULL OR r.agent_id = me);
END $$;

CREATE OR REPLACE FUNCTION ruckus_agent_datasets() RETURNS SETOF bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    AS $$
DECLARE
    me bigint := ruckus_agent_id();
BEGIN
    RETURN QUERY SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
        WHERE r.state = 'running' AND r.agent_id = me;
END $$;

CREATE OR REPLACE FUNCTION ruckus_agent_role() RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    AS $$
DECLARE
    me bigint := ruckus_agent_id();
BEGIN
    RETURN (SELECT db_role FROM agents WHERE id = me);
END $$;

-- The benchmarks of the runs the agent works on or may claim: the claim
-- reads its run's dataset through them.
CREATE FUNCTION ruckus_agent_benchmarks() RETURNS SETOF bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    AS $$
DECLARE
    me bigint := ruckus_agent_id();
BEGIN
    RETURN QUERY SELECT r.benchmark_id FROM runs r WHERE r.state = 'running' AND r.agent_id = me
        UNION SELECT r.benchmark_id FROM runs r WHERE r.id IN (SELECT ruckus_agent_claimable());
END $$;
REVOKE ALL ON FUNCTION ruckus_agent_benchmarks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ruckus_agent_benchmarks() TO ruckus_agent;

-- CREATE OR REPLACE drops a function's SET clauses: pin search_path again.
DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['ruckus_agent_id()', 'ruckus_agent_queues()', 'ruckus_agent_runs()',
                              'ruckus_agent_claimable()', 'ruckus_agent_datasets()', 'ruckus_agent_role()',
                              'ruckus_agent_benchmarks()'] LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
END $$;

-- A run the agent holds is one whose agent_id is its own: checked on the
-- row itself first, so the claimable runs are looked up only for a run it
-- does not hold (the claim).
ALTER POLICY agent_held_runs ON runs
    USING (agent_id = (SELECT ruckus_agent_id()) OR id IN (SELECT ruckus_agent_claimable()));
ALTER POLICY agent_run_benchmarks ON benchmarks
    USING (id IN (SELECT ruckus_agent_benchmarks()));
