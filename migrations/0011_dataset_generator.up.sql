-- A generated (synthetic) dataset keeps the spec it was generated from, so
-- people can see how it was made and generate it again; NULL for uploads.
ALTER TABLE datasets ADD COLUMN generator jsonb;
