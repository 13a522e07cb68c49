-- What agents write while they work a run: the lease (fence), live
-- progress, per-request results, samples over time and the run's story.

ALTER TABLE runs
    -- Bumped whenever the run changes hands (an agent takes it, the reaper
    -- hands it on, an agent hands it back). Every agent write names the
    -- fence it holds; a write under an older fence is refused.
    ADD COLUMN fence              bigint           NOT NULL DEFAULT 0,
    -- How many times the run was resumed from its persisted results after
    -- changing hands.
    ADD COLUMN resumed            integer          NOT NULL DEFAULT 0,
    -- black-box, gray-box, white-box or sim (simulated: labelled as such).
    ADD COLUMN mode               text             NOT NULL DEFAULT '',
    ADD COLUMN prompt_tokens      bigint           NOT NULL DEFAULT 0,
    ADD COLUMN output_tokens      bigint           NOT NULL DEFAULT 0,
    -- Seconds of measured load in segments already closed (a run worked by
    -- two agents in turn adds both), and the live segment's start.
    ADD COLUMN measured_seconds   double precision NOT NULL DEFAULT 0,
    ADD COLUMN segment_started_at timestamptz,
    -- Live figures, updated with progress.
    ADD COLUMN throughput         double precision NOT NULL DEFAULT 0,
    ADD COLUMN requests_per_s     double precision NOT NULL DEFAULT 0,
    ADD COLUMN eta_seconds        double precision,
    ADD COLUMN progress_at        timestamptz,
    -- Why the load stopped: completed, max_requests, max_duration,
    -- max_errors, cancelled.
    ADD COLUMN stopped_by         text             NOT NULL DEFAULT '',
    ADD COLUMN load_time_ms       double precision,
    -- Aggregate metrics (docs/metrics.md#definitions) and GPU summary,
    -- written when the run finishes.
    ADD COLUMN summary            jsonb,
    ADD COLUMN gpu_summary        jsonb,
    -- The tail of a launched runtime's log.
    ADD COLUMN runtime_log        text             NOT NULL DEFAULT '';

CREATE INDEX runs_running_idx ON runs (agent_id) WHERE state = 'running';

-- One row per dataset item sent (warm-up excluded). Idempotent on
-- (run_id, idx): a resumed run never counts an item twice.
CREATE TABLE results (
    run_id            bigint           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx               integer          NOT NULL,
    custom_id         text             NOT NULL,
    status            text             NOT NULL,
    output            text             NOT NULL DEFAULT '',
    finish_reason     text             NOT NULL DEFAULT '',
    prompt_tokens     integer          NOT NULL DEFAULT 0,
    completion_tokens integer          NOT NULL DEFAULT 0,
    tokens_estimated  boolean          NOT NULL DEFAULT false,
    sent_at           timestamptz      NOT NULL,
    ttft_ms           double precision,
    e2e_ms            double precision,
    tpot_ms           double precision,
    itl_mean_ms       double precision,
    itl_p50_ms        double precision,
    itl_p99_ms        double precision,
    itl_max_ms        double precision,
    content_events    integer          NOT NULL DEFAULT 0,
    http_status       integer,
    request_id        text             NOT NULL DEFAULT '',
    error_class       text             NOT NULL DEFAULT '',
    error             text             NOT NULL DEFAULT '',
    phase             text             NOT NULL DEFAULT '',
    agent_id          bigint,
    score             double precision,
    PRIMARY KEY (run_id, idx),
    CONSTRAINT results_status_check CHECK (status IN ('ok', 'error'))
);

-- Samples over time for live charts: progress and, where there are GPUs or
-- a runtime /metrics, their readings.
CREATE TABLE run_samples (
    run_id         bigint           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    t              timestamptz      NOT NULL,
    completed      integer          NOT NULL DEFAULT 0,
    errors         integer          NOT NULL DEFAULT 0,
    output_tokens  bigint           NOT NULL DEFAULT 0,
    throughput     double precision NOT NULL DEFAULT 0,
    gpu_util       double precision,
    gpu_mem_bytes  bigint,
    gpu_power_w    double precision,
    energy_j       double precision,
    running        double precision,
    waiting        double precision,
    kv_cache       double precision,
    PRIMARY KEY (run_id, t)
);

-- The run's story: taken, handed on, resumed, finished.
CREATE TABLE run_events (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id   bigint      NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    at       timestamptz NOT NULL DEFAULT now(),
    agent_id bigint,
    kind     text        NOT NULL,
    message  text        NOT NULL DEFAULT ''
);
CREATE INDEX run_events_run_id_idx ON run_events (run_id, id);
