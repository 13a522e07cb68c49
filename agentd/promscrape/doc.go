// Package promscrape is the gray-box extra of agentd: it scrapes an
// inference runtime's Prometheus /metrics while a run lasts and keeps the
// few series that say how loaded the server is.
//
// Parse reads the Prometheus text exposition format with expfmt's
// TextParser, skipping malformed lines, within bounds on size and sample
// count (a runtime is less trusted than agentd); Scrape fetches and maps
// one exposition; a Scraper polls at an interval, tolerating failures.
//
// # Mapping
//
// Each Snapshot field takes the first of these names that the exposition
// has (newer names before older), adding up the samples of all label sets
// — several engines, data-parallel ranks or models — for counts and
// counters, and averaging them for fractions. NaN samples are left out.
//
//	field               vLLM                                 SGLang                          TGI                               llama.cpp server
//	Running             vllm:num_requests_running            sglang:num_running_reqs         tgi_batch_current_size            llamacpp:requests_processing
//	Waiting             vllm:num_requests_waiting            sglang:num_queue_reqs           tgi_queue_size                    llamacpp:requests_deferred
//	KVCacheUsage        vllm:kv_cache_usage_perc (newer),    sglang:token_usage              —                                 llamacpp:kv_cache_usage_ratio
//	                    vllm:gpu_cache_usage_perc (older)
//	PrefixCacheHitRate  vllm:prefix_cache_hits_total /       sglang:cache_hit_rate           —                                 —
//	                    vllm:prefix_cache_queries_total,
//	                    else vllm:gpu_prefix_cache_hit_rate (older)
//	GenerationTokens    vllm:generation_tokens_total         sglang:generation_tokens_total  tgi_request_generated_tokens_sum  llamacpp:tokens_predicted_total
//	Preemptions         vllm:num_preemptions_total           —                               —                                 —
//
// Notes on meaning:
//   - vLLM's *_perc gauges are fractions despite the name (1 = 100 %), like
//     SGLang's token_usage and llama.cpp's ratio; KVCacheUsage is 0..1.
//   - vLLM's prefix-cache counters count tokens since the server started,
//     so the hit rate in a Snapshot is a lifetime figure; the rate over a
//     run or an interval is PrefixCacheHitRateSince between two snapshots.
//     They are also kept as PrefixCacheHits and PrefixCacheQueries.
//   - TGI has no KV-cache gauge and no prefix cache; its generated tokens
//     come from a histogram's sum, so they count finished requests only.
//   - Recent llama.cpp builds dropped kv_cache_usage_ratio; it is then nil.
//   - Ollama serves no Prometheus metrics.
//   - Summing assumes each label set is a separate part of the server. A
//     runtime that repeats the same scheduler's figures per tensor-parallel
//     rank (SGLang can label by tp_rank) would be counted once per rank.
package promscrape
