-- The reaper's event on a run it takes from a silent agent and queues
-- again is "reassigned", the word the code and the docs use for it
-- (docs/conventions.md#glossary); it was stored as "handed_on". Event
-- kinds have no CHECK on their values (only on their length,
-- run_events_kind_length), so the stored rows are all there is to change.
UPDATE run_events SET kind = 'reassigned' WHERE kind = 'handed_on';
