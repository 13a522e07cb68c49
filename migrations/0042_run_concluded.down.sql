ALTER TABLE runs DROP COLUMN concluded_attempt;
