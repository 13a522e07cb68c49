-- LLM-as-judge. A judging is an ordinary run of the judge model on a
-- dataset of judge prompts, in a benchmark of its own that belongs to the
-- run it judges (judges_run_id): agents lease and measure it like any run,
-- and it stays out of benchmark lists, verdicts and recommendations. When
-- the judge run finishes, the server's score job reads its answers into
-- judgments.
ALTER TABLE benchmarks ADD COLUMN judges_run_id bigint REFERENCES runs (id) ON DELETE CASCADE;
CREATE INDEX benchmarks_judges_run_id_idx ON benchmarks (judges_run_id) WHERE judges_run_id IS NOT NULL;

-- One row per judge run: what it judges and how.
CREATE TABLE judge_runs (
    run_id       bigint      PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    -- single: run_a graded alone; pairwise: run_a against run_b, both orders.
    mode         text        NOT NULL,
    run_a        bigint      NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    run_b        bigint      REFERENCES runs (id) ON DELETE CASCADE,
    -- The shipped rubric's name, or custom.
    rubric       text        NOT NULL,
    template     text        NOT NULL,
    scale_min    integer     NOT NULL DEFAULT 1,
    scale_max    integer     NOT NULL DEFAULT 10,
    -- manifest: started by the benchmark's scorer; user: from a page or the API.
    origin       text        NOT NULL DEFAULT 'user',
    state        text        NOT NULL DEFAULT 'judging',
    error        text        NOT NULL DEFAULT '',
    -- Pairwise outcome, from run_a's side; unparsed counts items with an
    -- unreadable verdict in either order.
    wins         integer     NOT NULL DEFAULT 0,
    ties         integer     NOT NULL DEFAULT 0,
    losses       integer     NOT NULL DEFAULT 0,
    inconsistent integer     NOT NULL DEFAULT 0,
    unparsed     integer     NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    judged_at    timestamptz,
    CONSTRAINT judge_runs_mode_check CHECK (mode IN ('single', 'pairwise')),
    CONSTRAINT judge_runs_pair_check CHECK ((mode = 'pairwise') = (run_b IS NOT NULL)),
    CONSTRAINT judge_runs_scale_check CHECK (scale_min < scale_max),
    CONSTRAINT judge_runs_origin_check CHECK (origin IN ('user', 'manifest')),
    CONSTRAINT judge_runs_state_check CHECK (state IN ('judging', 'judged', 'failed'))
);
CREATE INDEX judge_runs_run_a_idx ON judge_runs (run_a);
CREATE INDEX judge_runs_run_b_idx ON judge_runs (run_b) WHERE run_b IS NOT NULL;
-- A benchmark's scorer starts one judging per run, however often its
-- score job is retried.
CREATE UNIQUE INDEX judge_runs_manifest_key ON judge_runs (run_a) WHERE origin = 'manifest';

-- The judge's verdict on one item of the judged run (idx), per order it
-- was asked in: single; ab and ba (run_a shown first, then second) and
-- final (the two reconciled) for pairwise. Pairwise verdicts are from
-- run_a's side whatever the order: A (run_a better), B, tie.
CREATE TABLE judgments (
    judge_run_id  bigint           NOT NULL REFERENCES judge_runs (run_id) ON DELETE CASCADE,
    judged_run_id bigint           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx           integer          NOT NULL,
    ord           text             NOT NULL,
    -- single: the rating normalised to [0, 1]; NULL when there is none.
    score         double precision,
    rating        double precision,
    verdict       text             NOT NULL,
    rationale     text             NOT NULL DEFAULT '',
    -- The judge's answer as it came.
    raw           text             NOT NULL DEFAULT '',
    PRIMARY KEY (judge_run_id, idx, ord),
    CONSTRAINT judgments_ord_check CHECK (ord IN ('single', 'ab', 'ba', 'final')),
    CONSTRAINT judgments_verdict_check CHECK (verdict IN ('rated', 'A', 'B', 'tie', 'unparseable', 'no answer', 'request failed'))
);
CREATE INDEX judgments_judged_idx ON judgments (judged_run_id, idx);
