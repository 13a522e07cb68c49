ALTER TABLE runs DROP CONSTRAINT runs_rates_bounds;
ALTER TABLE results DROP CONSTRAINT results_counts_bounds, DROP CONSTRAINT results_timings_bounds;
