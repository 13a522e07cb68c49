-- The exact coverage of each p95's interval: intervals are now the exact
-- binomial order statistics (stats.QuantileInterval), whose coverage is
-- at least 95 % and known; a p95 over too few requests for one has none
-- (NULL bounds). Rows kept before have NULL coverage: their intervals were
-- the normal approximation's and are read as 95 %.
ALTER TABLE run_stats ADD COLUMN e2e_p95_coverage float8, ADD COLUMN ttft_p95_coverage float8;
