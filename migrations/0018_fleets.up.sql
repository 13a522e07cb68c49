-- Fleets: one manifest of scenarios × targets, submitted at once. Each
-- scenario becomes a benchmark of the fleet, each scenario × target a run
-- of it. A fleet run also has a string id, {fleet}-{submitted}-{hash},
-- that the same fleet, scenario, target and submission time always give.
CREATE TABLE fleets (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id     bigint      NOT NULL REFERENCES users (id),
    name         text        NOT NULL,
    -- When it was submitted, to the second: part of its runs' ids.
    submitted_at timestamptz NOT NULL,
    -- The manifest as submitted.
    manifest     jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT fleets_name_check CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    CONSTRAINT fleets_submitted_check CHECK (submitted_at = date_trunc('second', submitted_at))
);
CREATE INDEX fleets_owner_id_idx ON fleets (owner_id, id DESC);

ALTER TABLE benchmarks
    ADD COLUMN fleet_id       bigint REFERENCES fleets (id) ON DELETE CASCADE,
    ADD COLUMN fleet_scenario text,
    ADD CONSTRAINT benchmarks_fleet_scenario_check CHECK ((fleet_id IS NULL) = (fleet_scenario IS NULL) AND length(fleet_scenario) <= 100);
CREATE INDEX benchmarks_fleet_id_idx ON benchmarks (fleet_id) WHERE fleet_id IS NOT NULL;

ALTER TABLE runs
    ADD COLUMN fleet_run_id text,
    ADD CONSTRAINT runs_fleet_run_id_check CHECK (length(fleet_run_id) <= 120);
CREATE UNIQUE INDEX runs_fleet_run_id_key ON runs (fleet_run_id) WHERE fleet_run_id IS NOT NULL;
