package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// TestSummaryRowsAreAsWideAsTheHeader: every row — a run without a
// summary, a length sweep's run and each of its steps — has exactly the
// header's columns, and a length sweep's step ends with its lengths, its
// prompt tokens, its prefill interval and the runtime's state, empty where
// not measured.
func TestSummaryRowsAreAsWideAsTheHeader(t *testing.T) {
	t.Parallel()
	lo, hi, off, waiting, kv, pre := 900.0, 1100.0, 0.0, 2.0, 0.99, 3.0
	steps := []jobs.StepSummary{
		{Name: "input 128 output 16", InputTarget: 128, OutputTarget: 16, OK: 10,
			PromptTokens: &jobs.Dist{P50: 128, Min: 128, Max: 128}, PromptTokensOff: &off,
			PrefillTokensPerS: &jobs.MedianInterval{Median: 1000, Lo: &lo, Hi: &hi, N: 10},
			Runtime:           &jobs.RuntimeState{Readings: 4, MaxWaiting: &waiting, MaxKVCache: &kv, Preemptions: &pre}},
		{Name: "input 512", InputTarget: 512, Runtime: &jobs.RuntimeState{}},
	}
	sum, err := json.Marshal(jobs.RunSummary{Requests: 10, OK: 10, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	runs := []store.RunFigures{{Run: store.Run{ID: 1, State: "queued"}}, {Run: store.Run{ID: 2, State: "completed"}, Summary: sum}}
	var b bytes.Buffer
	if err := WriteSummary(&b, runs, 400, false); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll() // refuses a row of another width
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want the header, two runs and two steps", len(rows))
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	get := func(row int, name string) string { return rows[row][col[name]] }
	for name, want := range map[string]string{"step": "input 128 output 16", "input_tokens_target": "128", "output_tokens_target": "16",
		"prompt_tokens_p50": "128.000", "prompt_tokens_off": "0.000", "prefill_tokens_per_s": "1000.000", "prefill_tokens_per_s_lo": "900.000",
		"prefill_tokens_per_s_hi": "1100.000", "runtime_waiting_max": "2.000", "runtime_kv_cache_max": "0.990", "runtime_preemptions": "3.000"} {
		if got := get(3, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"output_tokens_target", "prompt_tokens_p50", "prefill_tokens_per_s", "runtime_waiting_max"} {
		if got := get(4, name); got != "" {
			t.Errorf("input 512 (nothing measured): %s = %q, want empty", name, got)
		}
	}
	if get(2, "input_tokens_target") != "" || get(1, "requests") != "" {
		t.Errorf("run rows carry step or unmeasured figures: %q, %q", get(2, "input_tokens_target"), get(1, "requests"))
	}
}
