-- The starter summaries were seeded with the scorer their shape suggests
-- (exact match), which scores any real model's summary about 0: they are
-- scored by ROUGE-L, as new installations seed them (app/seed.go).
UPDATE datasets SET default_scorer = 'rougeL'
WHERE starter AND format = 'simple' AND name = 'Starter: encyclopedia summaries' AND default_scorer = 'exact';

-- A suite item's prompt in pieces (description, question, solved answer,
-- delimiters), kept so a benchmark can build its own k-shot prompts from
-- the dataset. Not granted to agents: an example's answer is a reference.
ALTER TABLE dataset_items ADD COLUMN shot jsonb;

-- A run's few-shot setting: k solved examples before each question, drawn
-- as lm-evaluation-harness draws them with the seed. Part of what its
-- quality and speed are comparable under.
ALTER TABLE runs ADD COLUMN fewshot_k integer NOT NULL DEFAULT 0 CHECK (fewshot_k BETWEEN 0 AND 25),
    ADD COLUMN fewshot_seed bigint NOT NULL DEFAULT 0 CHECK (fewshot_seed >= 0);

-- The k-shot requests of a run, written by the server when it plans the
-- run (it alone reads the answers the examples show); the agent sends
-- these instead of the dataset's requests. Readable by an agent only for
-- the runs it holds, like sim_answers. The examples' answers are in these
-- prompts by design (a k-shot prompt shows k solved items), so an agent
-- holding a k-shot run can read the references of the items drawn as
-- examples: it is trusted with them as with sim_answers. One prompt is
-- bounded (4 MiB) and a benchmark's together (bench.MaxFewShotBytes).
CREATE TABLE run_prompts (
    run_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx integer NOT NULL,
    request jsonb NOT NULL CONSTRAINT run_prompts_request_size CHECK (octet_length(request::text) <= 4194304),
    PRIMARY KEY (run_id, idx)
);
ALTER TABLE run_prompts ENABLE ROW LEVEL SECURITY;
CREATE POLICY agent_held_run_prompts ON run_prompts FOR SELECT TO ruckus_agent
    USING (run_id IN (SELECT ruckus_agent_runs()));
GRANT SELECT ON run_prompts TO ruckus_agent;
