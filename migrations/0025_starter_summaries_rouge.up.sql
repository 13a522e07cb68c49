-- The starter summaries were seeded with the scorer their shape suggests
-- (exact match), which scores any real model's summary about 0: they are
-- scored by ROUGE-L, as new installations seed them (app/seed.go).
UPDATE datasets SET default_scorer = 'rougeL'
WHERE starter AND format = 'simple' AND name = 'Starter: encyclopedia summaries' AND default_scorer = 'exact';
