ALTER TABLE runs
    DROP COLUMN corpus_bleu,
    DROP COLUMN scorer_options;
