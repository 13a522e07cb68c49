package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// apiJSONIn is a GET of the API with a token, the client asking for
// lang, its body decoded.
func apiJSONIn(t *testing.T, e *env, path, tok, lang string) map[string]any {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept-Language", lang)
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := map[string]any{}
	if res.StatusCode != 200 || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, raw)
	}
	return out
}

// While a benchmark's conclusions are still being computed (here: a run
// being rescored), the report withholds what the recommendation withholds
// — the paired tests of quality over scores still changing — so the
// report's recommendation is the recommendation API's; and the API says
// what the benchmark waits for in English, whatever language the client
// asks for (API routes carry no reader's language), as the report's JSON
// does (docs/verdict.md#when-a-verdict-is-final).
func TestReportAndRecommendationWhilePending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 2.0
	// m/close answers right every item m/small does and 6 more: a
	// difference the paired test establishes (McNemar exact, p = 0.031)
	// and the two runs' own intervals do not.
	closeFake := smallFake
	closeFake.model = "m/close"
	closeFake.score = func(i int) float64 { return float64(min(i%3+boolInt(i < 18), 1)) }
	b, ids := finishedBenchmark(t, e, tok, 60, &price, []fakeRun{smallFake, closeFake})
	recPath := "/api/v1/benchmarks/" + b + "/recommendation"
	reportPath := "/api/v1/benchmarks/" + b + "/report.html?format=json"
	tested := func(rec any) string {
		feasible, _ := rec.(map[string]any)["feasible"].([]any)
		raw, _ := json.Marshal(feasible)
		return string(raw)
	}
	// Concluded: both weigh quality on the paired test.
	if rec, rep := apiJSONIn(t, e, recPath, tok, "en"), apiJSONIn(t, e, reportPath, tok, "en"); rec["pending"] != false || tested(rec) != tested(rep["recommendation"]) {
		t.Fatalf("concluded: the recommendation %v, the report's %v", rec, rep["recommendation"])
	}
	concluded := tested(apiJSONIn(t, e, recPath, tok, "en"))

	if r := postJSON(e, fmt.Sprintf("/api/v1/runs/%d/score", ids[1]), tok, `{"scorer":"exact"}`); r.status != 202 {
		t.Fatalf("rescore: %d %v", r.status, r.body)
	}
	rec, rep := apiJSONIn(t, e, recPath, tok, "de"), apiJSONIn(t, e, reportPath, tok, "de")
	if rec["pending"] != true || rep["pending"] != true {
		t.Fatalf("while rescoring: the recommendation pending %v, the report %v", rec["pending"], rep["pending"])
	}
	if tested(rec) == concluded {
		t.Fatalf("fixture: the recommendation while pending is the concluded one: %s", concluded)
	}
	if got, want := tested(rep["recommendation"]), tested(rec); got != want {
		t.Errorf("while pending the report's recommendation is\n%s\nthe recommendation API's\n%s", got, want)
	}
	why, _ := rec["pending_reason"].(string)
	if why == "" || why != rep["pending_reason"] || !strings.HasPrefix(why, "Not final yet: ") {
		t.Errorf("pending_reason asked in German: the recommendation API %q, the report's JSON %q; want the same English", why, rep["pending_reason"])
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
