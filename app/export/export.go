// Package export writes results in the formats people take elsewhere: CSV
// (one row per item, optionally with the run it belongs to) and JSONL in
// the OpenAI batch output format, so Ruckus results can be read by the
// same tools as the Batch API's or `vllm run-batch`'s. Writers work row by
// row: memory stays constant whatever the size.
package export

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// ResultColumns are the per-item CSV columns (written by the store's
// CopyResultsCSV, straight from PostgreSQL).
var ResultColumns = []string{"custom_id", "idx", "status", "output", "finish_reason", "prompt_tokens", "completion_tokens",
	"tokens_estimated", "ttft_ms", "e2e_ms", "tpot_ms", "itl_mean_ms", "score", "error_class", "error", "phase", "sent_at",
	"judge_verdict", "judge_rationale"}

// ExecColumns follow ResultColumns for runs whose code answers were
// executed in the sandbox (or that asked for several answers per item):
// the answer's sample, its class (passed, failed, exception,
// syntax_error, timeout, killed), the end of its stderr and its run time.
var ExecColumns = []string{"sample", "exec_status", "exec_stderr", "exec_ms"}

// RunColumns prefix ResultColumns in a benchmark's CSV.
var RunColumns = []string{"run_id", "model", "runtime", "hardware", "mode"}

// EngineColumn ends a benchmark's results CSV: the run's engine settings
// as name=value pairs by name ("" for the runtime's defaults). It comes
// last so that the columns before it keep their places.
const EngineColumn = "engine"

// BatchLine is one line of an OpenAI batch output file.
type BatchLine struct {
	ID       string          `json:"id"`
	CustomID string          `json:"custom_id"`
	Response *BatchResponse  `json:"response"`
	Error    *BatchError     `json:"error"`
	Ruckus   json.RawMessage `json:"ruckus,omitempty"`
}

// BatchResponse is a line's response: the HTTP status and the body the
// runtime answered with (as Ruckus reconstructs it from what it stored).
type BatchResponse struct {
	StatusCode int    `json:"status_code"`
	RequestID  string `json:"request_id"`
	Body       any    `json:"body"`
}

// BatchError is a line's error: its class and message.
type BatchError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Line is r as a line of the OpenAI batch output format (id, custom_id,
// response{status_code, request_id, body}, error). The body is a
// chat.completion or text_completion object with the output and usage; a
// failed request has its error, and a response with the runtime's HTTP
// status and an error body when the runtime answered at all. Ruckus's own
// timings ride along under "ruckus".
func Line(model string, engine jobs.Engine, r store.ResultRow) BatchLine {
	line := BatchLine{ID: fmt.Sprintf("batch_req_%d_%d", r.RunID, r.Idx), CustomID: r.CustomID}
	usage := map[string]int{"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens, "total_tokens": r.PromptTokens + r.CompletionTokens}
	if r.Status == jobs.StatusOK {
		var body map[string]any
		if r.Endpoint == "/v1/completions" {
			body = map[string]any{"id": r.RequestID, "object": "text_completion", "model": model,
				"choices": []any{map[string]any{"index": 0, "text": r.Output, "finish_reason": r.FinishReason}}, "usage": usage}
		} else {
			body = map[string]any{"id": r.RequestID, "object": "chat.completion", "model": model,
				"choices": []any{map[string]any{"index": 0, "message": map[string]string{"role": "assistant", "content": r.Output},
					"finish_reason": r.FinishReason}}, "usage": usage}
		}
		status := 200
		if r.HTTPStatus != nil {
			status = *r.HTTPStatus
		}
		line.Response = &BatchResponse{StatusCode: status, RequestID: r.RequestID, Body: body}
	} else {
		if r.HTTPStatus != nil {
			line.Response = &BatchResponse{StatusCode: *r.HTTPStatus, RequestID: r.RequestID, Body: ErrorBody(r)}
		}
		line.Error = &BatchError{Code: r.ErrorClass, Message: r.Error}
	}
	extra := map[string]any{"ttft_ms": r.TTFTms, "e2e_ms": r.E2Ems, "tpot_ms": r.TPOTms, "tokens_estimated": r.TokensEstimated, "score": r.Score}
	if r.JudgeVerdict != "" {
		extra["judge_verdict"], extra["judge_rationale"] = r.JudgeVerdict, r.JudgeRationale
	}
	if len(engine) > 0 {
		// The run's engine settings are part of its target: a line read
		// apart from its run still says which configuration answered.
		extra["engine"] = engine
	}
	line.Ruckus, _ = json.Marshal(extra)
	return line
}

// ErrorBody is the body of a failed request's response, in OpenAI's error
// shape: {"error": {"message", "type"}}, the type being Ruckus's error
// class.
func ErrorBody(r store.ResultRow) map[string]any {
	return map[string]any{"error": map[string]string{"message": r.Error, "type": r.ErrorClass}}
}

// WriteBatchLine writes Line(model, engine, r) and a newline.
func WriteBatchLine(w io.Writer, model string, engine jobs.Engine, r store.ResultRow) error {
	b, err := json.Marshal(Line(model, engine, r))
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// SummaryColumns are the columns of a benchmark's summary CSV. A figure
// that was not measured (no GPU readings, no price, no inter-token gaps,
// a runtime agentd did not launch) is an empty cell, never 0.
//
// A sweep's run has a row for the whole run (step empty) and then one row
// per step, whose rates are over the step's own window (requests_per_s is
// the achieved rate, offered_rps the rate it aimed at) and whose energy,
// cost, load time and log are left to the run's row.
//
// The node columns are the node's CPU utilisation (% of all CPUs) and
// memory over the run and its runtime's process tree (runtime_process
// says whose: runtime, or agentd for the simulated runtime); gpu_simulated
// is true when the GPU figures were simulated from the load (agentd
// --sim-gpu), not measured.
//
// A length sweep's step rows end with its lengths and what they did
// (docs/benchmarks.md#length-sweeps): the input and output lengths asked
// (output empty: the sampling's max_tokens), the prompt tokens the
// runtime counted (median, least, most) and the most any request was off
// the input length, the prefill tokens/s (median and its 95 % interval),
// and what the runtime's /metrics said during the step (the most requests
// waiting, the highest KV-cache usage, the preemptions); empty cells where
// not measured, and on every other row.
//
// engine, last, is the run's engine settings as jobs.Engine.Key writes
// them (empty for the runtime's defaults): two configurations of one
// model, runtime and hardware are two targets, on every row of each
// (docs/benchmarks.md#engine-settings).
//
// The quality columns are the run's scorer, how many items it scored, the
// mean item score with its 95 % bootstrap interval, and corpus_bleu (the
// bleu scorer's corpus BLEU, sacreBLEU's corpus_score / 100; empty for
// other scorers).
var SummaryColumns = []string{"run_id", "model", "runtime", "hardware", "mode", "state", "stopped_by", "error",
	"step", "offered_rps", "slos_hold", "requests", "ok", "errors",
	"output_tokens", "measured_seconds", "output_tokens_per_s", "steady_output_tokens_per_s", "requests_per_s", "goodput_rps",
	"ttft_p50_ms", "ttft_p95_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p95_ms", "tpot_p99_ms",
	"e2e_p50_ms", "e2e_p95_ms", "e2e_p99_ms", "itl_mean_ms", "itl_p50_ms", "itl_p90_ms", "itl_p95_ms", "itl_p99_ms", "itl_max_ms",
	"energy_j", "joules_per_token", "peak_gpu_mem_bytes", "cost_per_1m_tokens", "energy_kwh", "co2e_g",
	"load_time_ms", "runtime_log_tail", "scorer", "scored", "quality", "quality_lo", "quality_hi", "corpus_bleu",
	"gpu_simulated", "node_cpu_mean_percent", "node_cpu_peak_percent", "node_mem_peak_bytes", "node_mem_total_bytes",
	"runtime_process", "runtime_cpu_mean_percent", "runtime_rss_peak_bytes",
	"input_tokens_target", "output_tokens_target", "prompt_tokens_p50", "prompt_tokens_min", "prompt_tokens_max", "prompt_tokens_off",
	"prefill_tokens_per_s", "prefill_tokens_per_s_lo", "prefill_tokens_per_s_hi", "runtime_waiting_max", "runtime_kv_cache_max", "runtime_preemptions", EngineColumn}

// lengthColumns are the length sweep's columns of SummaryColumns, before
// engine at its end.
const lengthColumns = 12

// share formats a quality figure in [0, 1] to 6 decimals; "" when there
// is none (not scored, or not this scorer's figure).
func share(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', 6, 64)
}

// FormulaSafe neutralises a CSV text value a spreadsheet would read as a
// formula (OWASP's advice against CSV injection): one that begins with =,
// +, -, @, a tab or a carriage return gets a leading single quote, which
// spreadsheets show as text and do not evaluate.
func FormulaSafe(v string) string {
	if v != "" && strings.IndexByte("=+-@\t\r", v[0]) >= 0 {
		return "'" + v
	}
	return v
}

// WriteSummary writes one summary row per run from the runs' stored
// summaries (empty figures for runs not finished). Cost per 1M output
// tokens comes from the hardware's price per hour (empty when not set);
// CO₂e from the energy at gridCO2 g/kWh. Text that comes from outside
// (names, errors, the runtime's log) is made FormulaSafe unless raw.
func WriteSummary(w io.Writer, runs []store.RunFigures, gridCO2 float64, raw bool) error {
	cw := csv.NewWriter(w)
	text := FormulaSafe
	if raw {
		text = func(v string) string { return v }
	}
	if err := cw.Write(SummaryColumns); err != nil {
		return err
	}
	for _, r := range runs {
		head := []string{strconv.FormatInt(r.ID, 10), text(r.ModelName), r.Runtime, text(r.HardwareProfile), r.Mode, r.State, r.StoppedBy, text(r.Error)}
		rec := append(head, "", "", "")
		var s jobs.RunSummary
		if r.Summary == nil || json.Unmarshal(r.Summary, &s) != nil {
			// The figures and energy columns empty: the row keeps the
			// header's width (the columns after them are summaryTail).
			rec = append(rec, make([]string, len(SummaryColumns)-len(rec)-summaryTail)...)
		} else {
			rec = append(rec, summaryFigures(s.Requests, s.OK, s.Errors, s.OutputTokens, s.MeasuredSeconds, s.OutputTokensPerS,
				steadySpeed(r), s.RequestsPerS, s.GoodputRPS, s.TTFT, s.TPOT, s.E2E, s.ITL, s.ITLTokens)...)
			rec = append(rec, energyColumns(r, s, gridCO2)...)
		}
		load := ""
		if r.LoadTimeMs != nil {
			load = fixed3(*r.LoadTimeMs)
		}
		rec = append(rec, load, text(r.RuntimeLog), r.Scorer, strconv.Itoa(r.Scored),
			share(r.Quality), share(r.QualityLo), share(r.QualityHi), share(r.CorpusBLEU))
		rec = append(rec, nodeColumns(r)...)
		rec = append(rec, make([]string, lengthColumns)...)
		rec = append(rec, text(r.Engine.Key()))
		if err := cw.Write(rec); err != nil {
			return err
		}
		for _, st := range s.Steps {
			row := stepRow(head, st)
			row[len(row)-1] = rec[len(rec)-1]
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// summaryTail is how many columns of a run's summary row follow its
// energy columns: load_time_ms, runtime_log_tail, the six quality
// columns, the eight node columns (nodeColumns), the length sweep's
// columns (empty on a run's row) and engine.
const summaryTail = 2 + 6 + 8 + lengthColumns + 1

// fixed3 writes v with three decimals.
func fixed3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// measuredFixed3 is fixed3, or empty when v was not measured.
func measuredFixed3(v float64, measured bool) string {
	if !measured {
		return ""
	}
	return fixed3(v)
}

// summaryFigures are the columns from requests to itl_max_ms of a run or
// one of its steps; the ITL columns are empty when no token's latency was
// measured.
func summaryFigures(requests, ok, errs int, outputTokens int64, seconds, tps float64, steady string, rps, goodput float64,
	ttft, tpot, e2e, itl jobs.Dist, itlTokens int) []string {
	hasITL := itlTokens > 0
	return []string{strconv.Itoa(requests), strconv.Itoa(ok), strconv.Itoa(errs), strconv.FormatInt(outputTokens, 10),
		fixed3(seconds), fixed3(tps), steady, fixed3(rps), fixed3(goodput),
		fixed3(ttft.P50), fixed3(ttft.P95), fixed3(ttft.P99), fixed3(tpot.P50), fixed3(tpot.P95), fixed3(tpot.P99),
		fixed3(e2e.P50), fixed3(e2e.P95), fixed3(e2e.P99),
		measuredFixed3(itl.Mean, hasITL), measuredFixed3(itl.P50, hasITL), measuredFixed3(itl.P90, hasITL),
		measuredFixed3(itl.P95, hasITL), measuredFixed3(itl.P99, hasITL), measuredFixed3(itl.Max, hasITL)}
}

// steadySpeed is the steady_output_tokens_per_s column: the mean output
// tokens/s over the run's kept steady window, the speed its conclusions
// test and cost_per_1m_tokens is priced over
// (docs/metrics.md#throughput-output-tokenss-and-requestss); empty where
// none was kept (cost is then over output_tokens_per_s, the whole
// measured window's) and on a sweep's steps.
func steadySpeed(r store.RunFigures) string {
	if f := conclude.ReadFigures(r); f.Steady {
		return fixed3(*f.TokensPerS)
	}
	return ""
}

// energyColumns are a run's energy, joules per token, peak GPU memory,
// cost per 1M output tokens, kWh and CO₂e; empty where not known.
func energyColumns(r store.RunFigures, s jobs.RunSummary, gridCO2 float64) []string {
	var g struct {
		EnergyJ        *float64 `json:"energy_j"`
		JoulesPerToken *float64 `json:"joules_per_token"`
		PeakMemBytes   *uint64  `json:"peak_mem_bytes"`
	}
	if r.GPUSummary != nil {
		_ = json.Unmarshal(r.GPUSummary, &g)
	}
	energy, perToken, peak, cost, kwh, co2 := "", "", "", "", "", ""
	if g.EnergyJ != nil && *g.EnergyJ > 0 {
		energy, kwh, co2 = fixed3(*g.EnergyJ), strconv.FormatFloat(*g.EnergyJ/3.6e6, 'f', 6, 64), fixed3(*g.EnergyJ/3.6e6*gridCO2)
	}
	if g.JoulesPerToken != nil && *g.JoulesPerToken > 0 {
		perToken = fixed3(*g.JoulesPerToken)
	}
	if g.PeakMemBytes != nil {
		peak = strconv.FormatUint(*g.PeakMemBytes, 10)
	}
	if c := conclude.RunCostPer1M(r); c != nil {
		cost = fixed3(*c)
	}
	return []string{energy, perToken, peak, cost, kwh, co2}
}

// stepRow is the row of one step of a sweep: the run's head, the step's
// name, offered rate and SLO verdict, its figures, the rest empty.
func stepRow(head []string, st jobs.StepSummary) []string {
	offered := ""
	if st.OfferedRPS != nil {
		offered = fixed3(*st.OfferedRPS)
	}
	row := append(append([]string(nil), head...), st.Name, offered, strconv.FormatBool(st.SLOsHold))
	row = append(row, summaryFigures(st.Requests, st.OK, st.Errors, st.OutputTokens, st.WindowSeconds, st.OutputTokensPerS, "",
		st.AchievedRPS, st.GoodputRPS, st.TTFT, st.TPOT, st.E2E, st.ITL, st.ITLTokens)...)
	row = append(row, make([]string, len(SummaryColumns)-lengthColumns-1-len(row))...)
	// engine last, filled in from the run's row.
	return append(append(row, lengthStepColumns(st)...), "")
}

// lengthStepColumns are a length sweep's step's last columns
// (SummaryColumns); all empty for other steps.
func lengthStepColumns(st jobs.StepSummary) []string {
	out := make([]string, lengthColumns)
	if st.InputTarget == 0 {
		return out
	}
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return fixed3(*v)
	}
	out[0] = strconv.Itoa(st.InputTarget)
	if st.OutputTarget > 0 {
		out[1] = strconv.Itoa(st.OutputTarget)
	}
	if p := st.PromptTokens; p != nil {
		out[2], out[3], out[4], out[5] = fixed3(p.P50), fixed3(p.Min), fixed3(p.Max), opt(st.PromptTokensOff)
	}
	if p := st.PrefillTokensPerS; p != nil {
		out[6], out[7], out[8] = fixed3(p.Median), opt(p.Lo), opt(p.Hi)
	}
	if r := st.Runtime; r != nil && r.Readings > 0 {
		out[9], out[10], out[11] = opt(r.MaxWaiting), opt(r.MaxKVCache), opt(r.Preemptions)
	}
	return out
}

// nodeColumns are a run's gpu_simulated and node columns (SummaryColumns);
// empty cells where not measured.
func nodeColumns(r store.RunFigures) []string {
	var g struct {
		Simulated bool `json:"simulated"`
	}
	sim := ""
	if r.GPUSummary != nil && json.Unmarshal(r.GPUSummary, &g) == nil {
		sim = strconv.FormatBool(g.Simulated)
	}
	out := []string{sim, "", "", "", "", "", "", ""}
	var n jobs.NodeSummary
	if r.NodeSummary == nil || json.Unmarshal(r.NodeSummary, &n) != nil {
		return out
	}
	pct := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', 3, 64)
	}
	b := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	return []string{sim, pct(n.MeanCPUPercent), pct(n.PeakCPUPercent), b(n.PeakMemUsed), b(n.MemTotalBytes),
		n.ProcessKind(), pct(n.ProcMeanCPUPercent), b(n.ProcPeakRSSBytes)}
}
