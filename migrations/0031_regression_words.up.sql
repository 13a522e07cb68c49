-- A regression flag's sentence as app/advise said it (a code and its typed
-- values, advise.Said's JSON), so that pages word it in their reader's
-- language; detail keeps the English the API returns. Flags stored before
-- this have none and show their English.
ALTER TABLE run_regressions ADD COLUMN detail_said jsonb;
