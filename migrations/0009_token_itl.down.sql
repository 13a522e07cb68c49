ALTER TABLE results DROP CONSTRAINT results_itl_shape_check, DROP COLUMN itl_gaps_us, DROP COLUMN itl_tokens;
