-- The node's CPU and memory during a run, beside the GPU readings, and
-- whether the GPU readings are simulated (an agent with the simulated
-- runtime and --sim-gpu draws them from its load).
--
-- run_samples: the machine's CPU utilisation (0–100 % of all CPUs) and its
-- memory in use and in total; the launched runtime's process tree's share
-- of the CPUs (on the machine's scale) and resident memory. runs: the
-- run's node figures (JSON), as agentd summarises them.
--
-- An agent writes these, so each is bounded here (jobs/limits.go names the
-- bounds): percentages within 0–100 (NaN and infinities fail the check),
-- bytes within 0–2^60, the summary within 64 KiB of JSON. The GPU
-- readings get bounds as well (NOT VALID: old rows are left as they are).
ALTER TABLE run_samples
    ADD COLUMN cpu_util        double precision,
    ADD COLUMN mem_used_bytes  bigint,
    ADD COLUMN mem_total_bytes bigint,
    ADD COLUMN proc_cpu_util   double precision,
    ADD COLUMN proc_rss_bytes  bigint,
    ADD COLUMN gpu_simulated   boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT run_samples_node_bounds CHECK (
        cpu_util BETWEEN 0 AND 100 AND proc_cpu_util BETWEEN 0 AND 100
        AND mem_used_bytes BETWEEN 0 AND 1152921504606846976 AND mem_total_bytes BETWEEN 0 AND 1152921504606846976
        AND proc_rss_bytes BETWEEN 0 AND 1152921504606846976),
    ADD CONSTRAINT run_samples_gpu_bounds CHECK (
        gpu_util BETWEEN 0 AND 100 AND gpu_mem_bytes BETWEEN 0 AND 1152921504606846976
        AND gpu_power_w BETWEEN 0 AND 1e6 AND energy_j BETWEEN 0 AND 1e15
        AND running BETWEEN 0 AND 1e9 AND waiting BETWEEN 0 AND 1e9 AND kv_cache BETWEEN 0 AND 1e9) NOT VALID;

ALTER TABLE runs
    ADD COLUMN node_summary jsonb,
    ADD CONSTRAINT runs_node_summary_length CHECK (octet_length(node_summary::text) <= 65536);

-- The agent writes a run's node summary as it writes its GPU summary; it
-- inserts samples already (INSERT on the whole table).
GRANT UPDATE (node_summary) ON runs TO ruckus_agent;
