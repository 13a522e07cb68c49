DROP FUNCTION ruckus_agent_pool_end_tainted();
DROP FUNCTION ruckus_agent_pool_reset();

DO $$
DECLARE
    f text;
    server_role text := (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'agents'::regclass);
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
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
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO PUBLIC', f);
    END LOOP;
END $$;

DROP POLICY agent_own_queues ON river_queue;
DROP POLICY agent_add_queues ON river_queue;
DROP POLICY agent_touch_queues ON river_queue;
CREATE POLICY agent_own_queues ON river_queue TO ruckus_agent
    USING (name IN (SELECT ruckus_agent_queues())) WITH CHECK (name IN (SELECT ruckus_agent_queues()));
GRANT UPDATE ON river_queue TO ruckus_agent;

DROP POLICY agent_queue_jobs ON river_job;
DROP POLICY agent_fetched_jobs ON river_job;
CREATE POLICY agent_queue_jobs ON river_job TO ruckus_agent
    USING (queue IN (SELECT ruckus_agent_queues())) WITH CHECK (queue IN (SELECT ruckus_agent_queues()));
DROP TRIGGER river_job_locked_by_insert ON river_job;
DROP TRIGGER river_job_locked_by_update ON river_job;
DROP FUNCTION ruckus_river_job_locked_by();
ALTER TABLE river_job DROP COLUMN ruckus_locked_by;

DROP TRIGGER agents_grant_declared_insert ON agents;
DROP TRIGGER agents_grant_declared_update ON agents;
DROP FUNCTION ruckus_grant_declared();
GRANT UPDATE (gpu_name, gpu_count, gpu_memory_bytes, cpu_cores) ON hardware_profiles TO ruckus_agent;
REVOKE INSERT (declared_runtimes, declared_profile), UPDATE (declared_runtimes, declared_profile) ON agents FROM ruckus_agent;
GRANT INSERT (runtimes, hardware_profile), UPDATE (runtimes, hardware_profile) ON agents TO ruckus_agent;
ALTER TABLE agents DROP COLUMN grant_on_register;
ALTER TABLE agents DROP COLUMN declared_runtimes;
ALTER TABLE agents DROP COLUMN declared_profile;
