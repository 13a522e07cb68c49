// Package summary computes a run's summary (jobs.RunSummary: counts,
// rates, latency distributions, the token-level inter-token latency,
// goodput under the SLOs, a sweep's steps and saturation point) from the
// rows and plain aggregates app/store reads, so that the store computes
// no statistics (docs/concepts.md#the-conclusions-engine). A summary is a
// measurement of one run, not a conclusion: it lives apart from
// app/conclude, and agentd, which summarises the run it worked, uses it
// without the conclusions engine (docs/metrics.md).
package summary
