-- Conclusions drawn only between comparable runs, from noise measured in
-- the runs' own data, kept in tables so that no page reads every result
-- of a run to draw one (docs/concepts.md#comparability-and-noise).
--
-- run_stats: a run's figures with their 95 % intervals, computed on the
-- server when the run finishes (its score job) and again after a retry.
--   attempt: the run's attempt they were computed for; a row of an
--     earlier attempt is stale and read as absent.
--   load_key, load_identity: what a speed or latency figure is comparable
--     under (profile and its parameters, sampling, dataset, input and
--     output length class); load_key is load_identity's canonical text.
--   *_lo, *_hi: 95 % intervals; NULL where the run has too little data
--     for one (or, for a sweep, where the figure spans several loads).
--     Rates: batch means over the steady window; percentiles: the
--     distribution-free order-statistic interval.
--   batches: the number of batch means behind the rates' intervals.
--   output_tokens_*: successful answers' lengths, for the capacity planner.
CREATE TABLE run_stats (
    run_id            bigint           PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    attempt           integer          NOT NULL,
    load_key          text             NOT NULL,
    load_identity     jsonb            NOT NULL,
    ok                integer          NOT NULL,
    batches           integer          NOT NULL DEFAULT 0,
    tps               double precision,
    tps_se            double precision,
    tps_df            double precision,
    rps               double precision,
    rps_se            double precision,
    rps_df            double precision,
    goodput           double precision,
    goodput_se        double precision,
    goodput_df        double precision,
    e2e_p95           double precision,
    e2e_p95_lo        double precision,
    e2e_p95_hi        double precision,
    ttft_p95          double precision,
    ttft_p95_lo       double precision,
    ttft_p95_hi       double precision,
    output_tokens_p50 double precision,
    output_tokens_p90 double precision,
    output_tokens_max double precision,
    computed_at       timestamptz      NOT NULL DEFAULT now(),
    CONSTRAINT run_stats_load_key_check CHECK (length(load_key) <= 4000)
);
CREATE INDEX run_stats_load_key_idx ON run_stats (load_key);

-- A run's quality under each scorer identity it was scored with: a
-- rescoring or a judging adds its own beside the earlier ones (runs'
-- quality columns keep the latest, for the pages that show one).
--   scorer_key: the identity as text: the scorer, its options as
--     canonical JSON, and for the judge its model, rubric and mode.
--   idx, scores: the scored items (first answer of each) in item order,
--     for paired tests without reading the results again.
CREATE TABLE run_qualities (
    run_id      bigint             NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    scorer_key  text               NOT NULL,
    scorer      text               NOT NULL,
    items       integer            NOT NULL,
    quality     double precision,
    quality_lo  double precision,
    quality_hi  double precision,
    idx         integer[]          NOT NULL,
    scores      double precision[] NOT NULL,
    scored_at   timestamptz        NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, scorer_key),
    CONSTRAINT run_qualities_key_check CHECK (length(scorer_key) <= 20000),
    CONSTRAINT run_qualities_items_check CHECK (cardinality(idx) = cardinality(scores))
);
CREATE INDEX run_qualities_key_idx ON run_qualities (scorer_key);

-- Paired comparisons of two runs' quality under one scorer identity,
-- computed once (McNemar or the paired bootstrap) and dropped with either
-- quality when it is replaced. run_a < run_b; the difference is a − b.
CREATE TABLE quality_pairs (
    run_a      bigint           NOT NULL,
    run_b      bigint           NOT NULL,
    scorer_key text             NOT NULL,
    items      integer          NOT NULL,
    mean       double precision NOT NULL,
    lo         double precision NOT NULL,
    hi         double precision NOT NULL,
    p          double precision NOT NULL,
    test       text             NOT NULL,
    only_a     integer          NOT NULL,
    only_b     integer          NOT NULL,
    PRIMARY KEY (run_a, run_b, scorer_key),
    FOREIGN KEY (run_a, scorer_key) REFERENCES run_qualities (run_id, scorer_key) ON DELETE CASCADE,
    FOREIGN KEY (run_b, scorer_key) REFERENCES run_qualities (run_id, scorer_key) ON DELETE CASCADE,
    CONSTRAINT quality_pairs_order_check CHECK (run_a < run_b)
);
CREATE INDEX quality_pairs_b_idx ON quality_pairs (run_b, scorer_key);

-- The scorer identity a benchmark's verdict ranks quality by (NULL: its
-- own scorer's), and the repeat a run is of its target (0 for the first).
ALTER TABLE benchmarks ADD COLUMN verdict_scorer_key text;
ALTER TABLE runs ADD COLUMN repeat integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT runs_repeat_check CHECK (repeat BETWEEN 0 AND 9);

-- The qualities runs already have become their first scorer identity's.
INSERT INTO run_qualities (run_id, scorer_key, scorer, items, quality, quality_lo, quality_hi, idx, scores)
SELECT r.id, r.scorer || coalesce(r.scorer_options::jsonb::text, ''), r.scorer, r.scored, r.quality, r.quality_lo, r.quality_hi,
       coalesce((SELECT array_agg(x.idx ORDER BY x.idx) FROM results x WHERE x.run_id = r.id AND x.sample = 0 AND x.score IS NOT NULL), '{}'),
       coalesce((SELECT array_agg(x.score ORDER BY x.idx) FROM results x WHERE x.run_id = r.id AND x.sample = 0 AND x.score IS NOT NULL), '{}')
FROM runs r WHERE r.scorer <> '' AND r.quality IS NOT NULL;
