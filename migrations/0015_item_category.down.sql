ALTER TABLE datasets DROP COLUMN shots;
ALTER TABLE dataset_items DROP COLUMN category;
