-- A target's engine settings (docs/benchmarks.md#engine-settings) are part
-- of its identity: each run keeps the checked settings it was launched
-- with, name to canonical value ({} for the runtime's defaults), so that
-- pages, exports and comparisons can tell two configurations apart.
ALTER TABLE runs ADD COLUMN engine jsonb NOT NULL DEFAULT '{}'::jsonb
    CHECK (jsonb_typeof(engine) = 'object');

-- Requests the runtime preempted so far (vLLM's vllm:num_preemptions_total),
-- scraped in gray-box mode beside running, waiting and KV-cache usage.
ALTER TABLE run_samples ADD COLUMN preemptions double precision;
