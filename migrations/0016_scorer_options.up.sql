-- What a run was scored with beyond the scorer's name, and the run-level
-- figure some scorers have beside the mean of item scores.
--   scorer_options: the settings the scorer ran with (a regex scorer's
--     pattern, a json-schema scorer's schema), as in the manifest's
--     scorer_options; NULL when the scorer took none.
--   corpus_bleu: for the bleu scorer, sacreBLEU's corpus BLEU over every
--     scored item (n-gram statistics summed, then one score), in [0, 1];
--     NULL for other scorers.
ALTER TABLE runs
    ADD COLUMN scorer_options jsonb,
    ADD COLUMN corpus_bleu    double precision;
