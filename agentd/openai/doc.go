// Package openai is agentd's client for any OpenAI-compatible runtime
// (vLLM, SGLang, TGI, llama.cpp, Ollama, the built-in simulator, remote
// endpoints). It turns a stored dataset item into a streaming request
// (BuildRequest), sends it and measures it (Client.Do) exactly as
// docs/metrics.md#definitions says, so that a TTFT means the same thing
// whichever runtime produced it.
//
// The rules, each documented where it is applied:
//
//   - Times come from Go's monotonic clock: at send, at every server-sent
//     event, at the end.
//   - TTFT runs to the first event carrying generated content. A role-only
//     first chunk carries none and does not count (vLLM's benchmark tool
//     counts it; Ruckus does not). Reasoning text (reasoning_content,
//     reasoning) and tool-call deltas are generated content and time TTFT
//     and ITL, but only the answer's content or text goes into the Output
//     that scorers read (measure.take).
//   - E2E runs to the last content event; for a non-streaming answer, to
//     the end of its body (TTFT = E2E).
//   - Output tokens are the server's usage.completion_tokens; without
//     usage they are estimated per event by counting BPE pre-tokenizer
//     pieces, a lower bound exact for one-token events, and flagged
//     (estimateTokens).
//   - TPOT = (E2E − TTFT) / (tokens − 1). ITL splits the gap before each
//     content event evenly among the tokens that event carried; how many
//     it carried comes from per-chunk usage when the server sends it, else
//     from sharing the total out by each event's estimate
//     (computeTimings, tokensPerEvent).
//   - Every failure is a result with a jobs.Err* class and a message that
//     says what happened, keeping the output that had arrived.
//
// Runtimes are untrusted input: the event parser bounds line length, never
// panics on any bytes (FuzzSSE) and treats anything that is not the
// protocol as a malformed response rather than guessing.
package openai
