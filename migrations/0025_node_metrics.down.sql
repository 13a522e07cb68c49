REVOKE UPDATE (node_summary) ON runs FROM ruckus_agent;
ALTER TABLE runs DROP COLUMN node_summary;
ALTER TABLE run_samples
    DROP CONSTRAINT run_samples_gpu_bounds,
    DROP CONSTRAINT run_samples_node_bounds,
    DROP COLUMN gpu_simulated,
    DROP COLUMN proc_rss_bytes,
    DROP COLUMN proc_cpu_util,
    DROP COLUMN mem_total_bytes,
    DROP COLUMN mem_used_bytes,
    DROP COLUMN cpu_util;
