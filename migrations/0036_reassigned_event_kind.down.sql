UPDATE run_events SET kind = 'handed_on' WHERE kind = 'reassigned';
