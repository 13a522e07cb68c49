package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// The planner's ROI words its quality difference as the comparison does
// (Margin.ClaimSaid): m/big right on 17 of 30 items against today's 15,
// two discordant items (McNemar, p = 0.5), is "not established" with the
// smallest difference this comparison could have detected — never "not
// significant" alone, which reads as "equal" — on the page in English
// and German and in the API.
func TestROIQualityNotEstablishedSaysWhatCouldBeDetected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, today := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	finishRun(t, e, today)
	datasetID := datasetOfRun(t, e, today)
	price := 3.6
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	big := finishedRun(t, e, tok, datasetID, 30, func(int) int { return 6 })
	moveRun(t, e, big, "m/big", "cheap-1", 1.2)
	scoreItems(t, e, today, "exact", func(i int) float64 { return float64(1 - i%2) }) // 15 of 30
	scoreItems(t, e, big, "exact", func(i int) float64 {                              // 17 of 30: the same and items 1 and 3
		if i%2 == 0 || i == 1 || i == 3 {
			return 1
		}
		return 0
	})
	body := fmt.Sprintf(`{"dataset_id":%d,"traffic":{"peak_rps":10,"average_rps":5,"input_tokens":5,"output_tokens":5},
		"slo":{"ttft_ms":1000,"goodput":0.9},"headroom":0.2,"today":{"model":"m/small","hardware":"cpu-2c","replicas":5}}`, datasetID)
	r := e.api(http.MethodPost, "/api/v1/capacity", tok, strings.NewReader(body), "application/json")
	roi, _ := r.body["roi"].(map[string]any)
	if r.status != 200 || roi == nil {
		t.Fatalf("plan: %d %v", r.status, r.body)
	}
	var q map[string]any
	for _, x := range roi["rows"].([]any) {
		if row := x.(map[string]any); row["run_id"] == float64(big) {
			q = row["quality"].(map[string]any)
		}
	}
	claim, _ := q["claim"].(string)
	if det, _ := q["detectable_pct"].(float64); q["significant"] != false || det <= 0 ||
		!strings.Contains(claim, "not established (mcnemar") || !strings.Contains(claim, "the smallest difference it could detect is") {
		t.Fatalf("m/big's quality against today: %v", q)
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := fmt.Sprintf("/capacity?dataset=%d&peak_rps=10&average_rps=5&input_tokens=5&output_tokens=5&ttft_ms=1000&tpot_ms=&goodput=0.9"+
		"&today_model=m%%2Fsmall&today_hardware=cpu-2c&today_replicas=5", datasetID)
	for lang, want := range map[string][]string{"en": {"+0.067 [", "not established (mcnemar", "the smallest difference it could detect is"},
		"de": {"+0,067 [", "nicht belegt (mcnemar", "der kleinste Unterschied, den er erkennen konnte"}} {
		p := c.getIn(page, lang)
		got := p.text(fmt.Sprintf(`[data-testid="roi-run-%d"] [data-testid="quality-change"]`, big))
		if p.status != 200 || !strings.HasPrefix(got, want[0]) || !strings.Contains(got, want[1]) || !strings.Contains(got, want[2]) ||
			strings.Contains(got, "not significant") || strings.Contains(got, "nicht signifikant") {
			t.Errorf("%s: quality change %q (%d), want %q", lang, got, p.status, want)
		}
	}
}
