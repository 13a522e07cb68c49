-- A budgeted search over a benchmark's configurations
-- (docs/benchmarks.md#budgeted-search): each run of the search belongs to
-- a rung (NULL outside a search), and each rung's cut is decided once and
-- kept with the evidence it was decided on. The primary key makes the
-- decision once: a second attempt to decide the same rung finds it taken.
ALTER TABLE runs ADD COLUMN search_rung smallint CHECK (search_rung >= 0);
-- The reaper looks for rungs whose runs have all ended every second: only
-- a search's runs are read.
CREATE INDEX runs_search_rung_idx ON runs (benchmark_id, search_rung) WHERE search_rung IS NOT NULL;

CREATE TABLE search_cuts (
    benchmark_id bigint      NOT NULL REFERENCES benchmarks (id) ON DELETE CASCADE,
    rung         smallint    NOT NULL CHECK (rung >= 0),
    decided_at   timestamptz NOT NULL DEFAULT now(),
    cut          jsonb       NOT NULL CHECK (jsonb_typeof(cut) = 'object'),
    PRIMARY KEY (benchmark_id, rung)
);
