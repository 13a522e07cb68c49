package jobs

import "unicode/utf8"

// The most the database keeps of each value an agent writes, in bytes (or
// elements), as migration 0024_agent_writes_bounded's CHECK constraints
// hold it: far above what a run writes, and small enough that no agent can
// fill the server's memory with what a page reads back. agentd cuts what
// it sends to these limits (and says so in its log); a value over a limit
// is refused by the database, whoever writes it.
const (
	// A result: a request's output (about 250,000 tokens of text), its
	// error message, its custom_id (256 characters of any script), its
	// finish reason, request id, error class and phase, and its
	// inter-token gaps (one per content event).
	MaxOutputBytes      = 1 << 20
	MaxResultErrorBytes = 64 << 10
	MaxCustomIDBytes    = 1024
	MaxShortTextBytes   = 256
	MaxITLGaps          = 1 << 20

	// A run: its error, how it stopped and its mode, the runtime log's
	// tail, its summary and GPU summary (JSON, measured as text).
	MaxRunErrorBytes   = 64 << 10
	MaxRuntimeLogBytes = 256 << 10
	MaxSummaryBytes    = 1 << 20
	MaxGPUSummaryBytes = 64 << 10
	// A run's node summary (CPU and memory, JSON as text), migration
	// 0025_node_metrics.
	MaxNodeSummaryBytes = 64 << 10

	// A chart sample's readings: bytes (memory), watts (all GPUs), joules
	// and the runtime's request and cache figures. Percentages are within
	// 0–100.
	MaxSampleBytes   = 1 << 60
	MaxSamplePowerW  = 1e6
	MaxSampleEnergyJ = 1e15
	MaxSampleCount   = 1e9

	// An event of a run's story: its kind and message.
	MaxEventKindBytes    = 64
	MaxEventMessageBytes = 4 << 10

	// An agent's row: host, version, capabilities (JSON as text), and its
	// runtimes (at most 16, 1 KiB together).
	MaxAgentTextBytes    = 256
	MaxCapabilitiesBytes = 64 << 10
	MaxRuntimes          = 16
)

// CutTo shortens s to at most max bytes, ending on a whole UTF-8
// character, and reports whether it cut.
func CutTo(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// CutToTail is CutTo keeping the end of s (a log's tail).
func CutToTail(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:], true
}

// Bound cuts the result's values to what the database keeps (the limits
// above) and names those it cut.
func (r *Result) Bound() []string {
	var cut []string
	bound := func(name string, v *string, max int) {
		var c bool
		if *v, c = CutTo(*v, max); c {
			cut = append(cut, name)
		}
	}
	bound("output", &r.Output, MaxOutputBytes)
	bound("error", &r.Error, MaxResultErrorBytes)
	bound("custom_id", &r.CustomID, MaxCustomIDBytes)
	bound("finish_reason", &r.FinishReason, MaxShortTextBytes)
	bound("request_id", &r.RequestID, MaxShortTextBytes)
	bound("error_class", &r.ErrorClass, MaxShortTextBytes)
	bound("phase", &r.Phase, MaxShortTextBytes)
	if len(r.ITLGapsMicros) > MaxITLGaps {
		r.ITLGapsMicros = r.ITLGapsMicros[:MaxITLGaps]
		if len(r.ITLTokens) > MaxITLGaps {
			r.ITLTokens = r.ITLTokens[:MaxITLGaps]
		}
		cut = append(cut, "itl_gaps_us")
	}
	return cut
}
