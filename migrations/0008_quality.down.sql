ALTER TABLE runs DROP COLUMN scorer, DROP COLUMN scored, DROP COLUMN quality, DROP COLUMN quality_lo,
    DROP COLUMN quality_hi, DROP COLUMN scored_at;
