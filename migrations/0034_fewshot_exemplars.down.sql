ALTER TABLE runs DROP COLUMN fewshot_exemplars;
