DROP TABLE search_cuts;
ALTER TABLE runs DROP COLUMN search_rung;
