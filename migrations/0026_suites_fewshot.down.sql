DROP TABLE run_prompts;
ALTER TABLE runs DROP COLUMN fewshot_seed, DROP COLUMN fewshot_k;
ALTER TABLE dataset_items DROP COLUMN shot;
UPDATE datasets SET default_scorer = 'exact'
WHERE starter AND format = 'simple' AND name = 'Starter: encyclopedia summaries' AND default_scorer = 'rougeL';
