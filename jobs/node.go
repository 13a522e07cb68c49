package jobs

// NodeSummary is a run's node figures over its samples, as agentd
// stores them in the run's node_summary (agentd/node): the machine's CPU
// utilisation (% of all CPUs) and memory, and the process tree of its
// runtime. A figure absent was not measured; the process figures are
// absent when no sample had the process tree.
type NodeSummary struct {
	Samples        int      `json:"samples"`
	MeanCPUPercent *float64 `json:"mean_cpu_percent,omitempty"`
	PeakCPUPercent *float64 `json:"peak_cpu_percent,omitempty"`
	MemTotalBytes  *int64   `json:"mem_total_bytes,omitempty"`
	PeakMemUsed    *int64   `json:"peak_mem_used_bytes,omitempty"`
	MeanMemUsed    *int64   `json:"mean_mem_used_bytes,omitempty"`
	// Process names what the process figures are of: "runtime" (the
	// process tree agentd launched), "agentd" (a simulated runtime, which
	// runs inside agentd), or empty when none was watched.
	Process            string   `json:"process,omitempty"`
	ProcMeanCPUPercent *float64 `json:"process_mean_cpu_percent,omitempty"`
	ProcPeakCPUPercent *float64 `json:"process_peak_cpu_percent,omitempty"`
	ProcPeakRSSBytes   *int64   `json:"process_peak_rss_bytes,omitempty"`
}
