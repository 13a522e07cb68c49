-- Every inter-token gap of every request, so a run's ITL percentiles are
-- over all tokens of all measured requests (vLLM bench's definition) and a
-- stall inside one stream shows in them.
--
-- itl_gaps_us holds, for each content event after the first, the time
-- since the previous content event in microseconds. itl_tokens holds how
-- many tokens that event carried; NULL when every event carried one. An
-- event's gap is shared evenly by its tokens: a gap g over n tokens is n
-- inter-token latencies of g/n.
ALTER TABLE results
    ADD COLUMN itl_gaps_us integer[],
    ADD COLUMN itl_tokens  integer[],
    ADD CONSTRAINT results_itl_shape_check CHECK (itl_tokens IS NULL
        OR cardinality(itl_tokens) = cardinality(itl_gaps_us));
