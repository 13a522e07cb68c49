-- Answers the simulated runtime streams, decided by the server. On the sim
-- runtime a run can show quality only if some answers are right, and only
-- the server may read an item's reference: when it plans a sim run it
-- writes each item's answer here (right with the model's configured
-- accuracy, else a plausible wrong one), and the agent streams it instead
-- of filler. The agent reads the answers of the runs it holds, never the
-- references they were made from.
CREATE TABLE sim_answers (
    run_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx integer NOT NULL,
    answer text NOT NULL,
    PRIMARY KEY (run_id, idx)
);

-- Readable by an agent only for runs it holds (the same test as its
-- results); nothing else, and it writes none.
ALTER TABLE sim_answers ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_held_sim_answers ON sim_answers FOR SELECT TO ruckus_agent
    USING (run_id IN (SELECT ruckus_agent_runs()));
GRANT SELECT ON sim_answers TO ruckus_agent;
