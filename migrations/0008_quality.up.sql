-- A run's quality: the scorer used, how many items it scored, the mean
-- score and its 95 % bootstrap confidence interval.
ALTER TABLE runs
    ADD COLUMN scorer       text NOT NULL DEFAULT '',
    ADD COLUMN scored       integer NOT NULL DEFAULT 0,
    ADD COLUMN quality      double precision,
    ADD COLUMN quality_lo   double precision,
    ADD COLUMN quality_hi   double precision,
    ADD COLUMN scored_at    timestamptz;
