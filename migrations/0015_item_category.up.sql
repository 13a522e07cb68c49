-- An item's category (MMLU's subject, HellaSwag's activity label, a
-- suite's "category"), set when the file is parsed, so scores can be
-- shown per category; NULL for items without one. A dataset records how
-- many solved examples its prompts carry (k-shot).
ALTER TABLE dataset_items ADD COLUMN category text;
ALTER TABLE dataset_items ADD CONSTRAINT dataset_items_category_check CHECK (length(category) <= 200);
ALTER TABLE datasets ADD COLUMN shots integer NOT NULL DEFAULT 0;
ALTER TABLE datasets ADD CONSTRAINT datasets_shots_check CHECK (shots BETWEEN 0 AND 25);
