-- Benchmarks: a dataset × targets; each target is a run, worked as one
-- River job by an agent serving the run's hardware profile and runtime.
CREATE TABLE benchmarks (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id   bigint      NOT NULL REFERENCES users (id),
    name       text        NOT NULL,
    dataset_id bigint      NOT NULL REFERENCES datasets (id),
    -- The manifest as submitted: what the runs were asked to do.
    manifest   jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX benchmarks_owner_id_idx ON benchmarks (owner_id);
CREATE INDEX benchmarks_dataset_id_idx ON benchmarks (dataset_id);

CREATE TABLE runs (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    benchmark_id     bigint      NOT NULL REFERENCES benchmarks (id) ON DELETE CASCADE,
    model_id         bigint      NOT NULL REFERENCES models (id),
    runtime          text        NOT NULL,
    hardware_profile text        NOT NULL REFERENCES hardware_profiles (slug),
    river_job_id     bigint,
    state            text        NOT NULL DEFAULT 'queued',
    -- No live agent served this profile and runtime when the run was queued.
    waiting_for_agent boolean    NOT NULL DEFAULT false,
    attempt          integer     NOT NULL DEFAULT 0,
    agent_id         bigint      REFERENCES agents (id),
    total            integer     NOT NULL DEFAULT 0,
    completed        integer     NOT NULL DEFAULT 0,
    errors           integer     NOT NULL DEFAULT 0,
    error            text        NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    CONSTRAINT runs_state_check CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled'))
);
CREATE INDEX runs_benchmark_id_idx ON runs (benchmark_id);
