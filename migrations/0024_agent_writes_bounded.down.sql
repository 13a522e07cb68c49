-- Back to migration 0021's policies, without the bounds and the triggers.
DROP TRIGGER agents_agent_write ON agents;
DROP FUNCTION ruckus_agent_row_write();
DROP TRIGGER runs_agent_write ON runs;
DROP FUNCTION ruckus_agent_run_write();

ALTER POLICY agent_write_events ON run_events
    WITH CHECK (agent_id = (SELECT ruckus_agent_id())
        AND (run_id IN (SELECT ruckus_agent_runs()) OR run_id IN (SELECT ruckus_agent_claimable())));
ALTER POLICY agent_write_samples ON run_samples
    WITH CHECK (run_id IN (SELECT ruckus_agent_runs()));
ALTER POLICY agent_write_results ON results
    WITH CHECK (run_id IN (SELECT ruckus_agent_runs()) AND agent_id = (SELECT ruckus_agent_id()));
DROP POLICY agent_write_runs ON runs;
DROP POLICY agent_read_runs ON runs;
CREATE POLICY agent_held_runs ON runs TO ruckus_agent
    USING (agent_id = (SELECT ruckus_agent_id()) OR id IN (SELECT ruckus_agent_claimable()))
    WITH CHECK (agent_id IS NULL OR agent_id = (SELECT ruckus_agent_id()));
DROP FUNCTION ruckus_agent_open_runs();

ALTER TABLE river_queue DROP CONSTRAINT ruckus_river_queue_metadata_length;
ALTER TABLE river_job
    DROP CONSTRAINT ruckus_river_job_args_length,
    DROP CONSTRAINT ruckus_river_job_metadata_length,
    DROP CONSTRAINT ruckus_river_job_errors_length;
ALTER TABLE hardware_profiles
    DROP CONSTRAINT hardware_profiles_slug_length,
    DROP CONSTRAINT hardware_profiles_gpu_name_length;
ALTER TABLE agents
    DROP CONSTRAINT agents_host_length,
    DROP CONSTRAINT agents_version_length,
    DROP CONSTRAINT agents_runtimes_length,
    DROP CONSTRAINT agents_declared_runtimes_length,
    DROP CONSTRAINT agents_declared_profile_length,
    DROP CONSTRAINT agents_capabilities_length;
ALTER TABLE run_events
    DROP CONSTRAINT run_events_kind_length,
    DROP CONSTRAINT run_events_message_length;
ALTER TABLE results
    DROP CONSTRAINT results_output_length,
    DROP CONSTRAINT results_error_length,
    DROP CONSTRAINT results_custom_id_length,
    DROP CONSTRAINT results_short_text_length,
    DROP CONSTRAINT results_itl_gaps_length;
ALTER TABLE runs
    DROP CONSTRAINT runs_error_length,
    DROP CONSTRAINT runs_stopped_by_length,
    DROP CONSTRAINT runs_mode_length,
    DROP CONSTRAINT runs_runtime_log_length,
    DROP CONSTRAINT runs_summary_length,
    DROP CONSTRAINT runs_gpu_summary_length;
