-- A run prompted with a fixed set of published solved examples (a
-- manifest's fewshot.exemplars, such as lm-eval's gsm8k-cot) names the set
-- here; fewshot_k is then the set's size. '' for drawn examples or none.
ALTER TABLE runs ADD COLUMN fewshot_exemplars text NOT NULL DEFAULT ''
    CONSTRAINT runs_fewshot_exemplars_check CHECK (fewshot_exemplars ~ '^[a-z0-9-]{0,64}$');
