package sim

import (
	"fmt"
	"net/http"
	"strings"
)

// metrics serves Prometheus text format under vLLM's names, so that
// agentd's gray-box scraping (agentd/promscrape) reads the simulated
// runtime as it reads vLLM: the requests running and waiting, the KV
// cache's usage (the newer and the older name), preemptions and
// generated tokens. Without a serving model nothing waits and the cache
// is reported empty.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	running, waiting, usage, preempts := s.inFlight.Load(), 0, 0.0, int64(0)
	if s.sched != nil {
		var r int
		r, waiting, usage, preempts = s.sched.state()
		running = int64(r)
	}
	var b strings.Builder
	for _, m := range []struct {
		name, kind, help string
		v                any
	}{
		{"vllm:num_requests_running", "gauge", "Requests in the batch.", running},
		{"vllm:num_requests_waiting", "gauge", "Requests waiting for the batch or the KV cache.", waiting},
		{"vllm:kv_cache_usage_perc", "gauge", "KV-cache usage, 1 = 100 %.", usage},
		{"vllm:gpu_cache_usage_perc", "gauge", "KV-cache usage, 1 = 100 % (older name).", usage},
		{"vllm:num_preemptions_total", "counter", "Requests preempted.", preempts},
		{"vllm:generation_tokens_total", "counter", "Tokens generated.", s.c.tokens.Load()},
	} {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %v\n", m.name, m.help, m.name, m.kind, m.name, m.v)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}
