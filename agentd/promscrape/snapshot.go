package promscrape

import (
	"math"
	"strings"
	"time"
)

// Snapshot is the common view of one scrape. A nil field is a series the
// runtime did not expose.
type Snapshot struct {
	At time.Time
	// Runtime is guessed from the metric names: vllm, sglang, tgi,
	// llama-cpp, or empty.
	Runtime string
	// Running and Waiting are requests being served and queued.
	Running, Waiting *float64
	// KVCacheUsage is the fraction of the KV cache in use, 0..1.
	KVCacheUsage *float64
	// PrefixCacheHitRate is a fraction, 0..1: the runtime's own gauge, or
	// hits/queries since the runtime started when it exposes counters
	// (see PrefixCacheHitRateSince for the rate over an interval).
	PrefixCacheHitRate *float64
	// PrefixCacheHits and PrefixCacheQueries are counters (tokens, for
	// vLLM), when the runtime has them.
	PrefixCacheHits, PrefixCacheQueries *float64
	// GenerationTokens counts generated tokens since the runtime started.
	GenerationTokens *float64
	// Preemptions counts requests the runtime preempted (their KV cache
	// taken back) since it started.
	Preemptions *float64
	// Samples is how many samples the scrape held; Malformed how many
	// lines could not be read.
	Samples, Malformed int
}

// How a series' samples (one per label set) become one number.
type aggregation int

const (
	sum  aggregation = iota // counts and counters: engines, ranks, models add up
	mean                    // fractions: the share of the whole, for equal parts
)

// series maps one Snapshot field to runtime metric names, the first that
// is present winning (newer names first).
type series struct {
	field func(*Snapshot) **float64
	names []string
	agg   aggregation
}

// mapping is documented in doc.go; keep the two in step.
func mapping() []series {
	return []series{
		{func(s *Snapshot) **float64 { return &s.Running }, []string{
			"vllm:num_requests_running", "sglang:num_running_reqs", "tgi_batch_current_size", "llamacpp:requests_processing",
		}, sum},
		{func(s *Snapshot) **float64 { return &s.Waiting }, []string{
			"vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size", "llamacpp:requests_deferred",
		}, sum},
		{func(s *Snapshot) **float64 { return &s.KVCacheUsage }, []string{
			"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "llamacpp:kv_cache_usage_ratio",
		}, mean},
		{func(s *Snapshot) **float64 { return &s.PrefixCacheHits }, []string{"vllm:prefix_cache_hits_total"}, sum},
		{func(s *Snapshot) **float64 { return &s.PrefixCacheQueries }, []string{"vllm:prefix_cache_queries_total"}, sum},
		{func(s *Snapshot) **float64 { return &s.PrefixCacheHitRate }, []string{
			"vllm:gpu_prefix_cache_hit_rate", "sglang:cache_hit_rate",
		}, mean},
		{func(s *Snapshot) **float64 { return &s.GenerationTokens }, []string{
			"vllm:generation_tokens_total", "sglang:generation_tokens_total", "llamacpp:tokens_predicted_total",
			"tgi_request_generated_tokens_sum",
		}, sum},
		{func(s *Snapshot) **float64 { return &s.Preemptions }, []string{"vllm:num_preemptions_total"}, sum},
	}
}

// FromSamples maps parsed samples to a Snapshot (At and Malformed left
// for the caller). NaN samples are left out.
func FromSamples(samples []Sample) Snapshot {
	byName := map[string][]float64{}
	snap := Snapshot{Samples: len(samples)}
	for _, s := range samples {
		if snap.Runtime == "" {
			snap.Runtime = runtimeOf(s.Name)
		}
		if !math.IsNaN(s.Value) {
			byName[s.Name] = append(byName[s.Name], s.Value)
		}
	}
	for _, m := range mapping() {
		for _, name := range m.names {
			if vs := byName[name]; len(vs) > 0 {
				*m.field(&snap) = aggregate(vs, m.agg)
				break
			}
		}
	}
	// vLLM's counters replaced its hit-rate gauge; they win when present.
	if snap.PrefixCacheHits != nil && snap.PrefixCacheQueries != nil {
		snap.PrefixCacheHitRate = ratio(*snap.PrefixCacheHits, *snap.PrefixCacheQueries)
	}
	return snap
}

// PrefixCacheHitRateSince is the prefix-cache hit rate between prev and s,
// from the counters' increase; nil without counters in both, without
// queries in between, or when the counters went back (a restart).
func (s Snapshot) PrefixCacheHitRateSince(prev Snapshot) *float64 {
	if s.PrefixCacheHits == nil || s.PrefixCacheQueries == nil || prev.PrefixCacheHits == nil || prev.PrefixCacheQueries == nil {
		return nil
	}
	hits := *s.PrefixCacheHits - *prev.PrefixCacheHits
	queries := *s.PrefixCacheQueries - *prev.PrefixCacheQueries
	if hits < 0 || queries < 0 {
		return nil
	}
	return ratio(hits, queries)
}

func ratio(part, whole float64) *float64 {
	if whole <= 0 || math.IsInf(whole, 0) {
		return nil
	}
	r := part / whole
	return &r
}

func aggregate(vs []float64, agg aggregation) *float64 {
	var total float64
	for _, v := range vs {
		total += v
	}
	if agg == mean {
		total /= float64(len(vs))
	}
	return &total
}

func runtimeOf(name string) string {
	switch {
	case strings.HasPrefix(name, "vllm:"):
		return "vllm"
	case strings.HasPrefix(name, "sglang:"):
		return "sglang"
	case strings.HasPrefix(name, "tgi_"):
		return "tgi"
	case strings.HasPrefix(name, "llamacpp:"):
		return "llama-cpp"
	}
	return ""
}
