ALTER TABLE datasets DROP COLUMN generator;
