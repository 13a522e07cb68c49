UPDATE datasets SET default_scorer = 'exact'
WHERE starter AND format = 'simple' AND name = 'Starter: encyclopedia summaries' AND default_scorer = 'rougeL';
