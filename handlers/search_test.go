package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/testkit"
)

// A matrix through the API: each value is refused as an engine setting at
// targets[i].matrix.NAME[j] (the hardware's GPUs included); the dry run
// lists every configuration with its engine settings and estimated time
// and, for a search, its plan; the created search's record is in the
// benchmark's JSON and on its page, each decided rung with its evidence.
func TestMatrixAndSearchThroughTheAPI(t *testing.T) {
	t.Parallel()
	e, c, ds := formEnv(t)
	ctx := context.Background()
	u, err := e.store.UserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	tok := e.token(u)
	manifest := func(matrix, search string) string {
		return fmt.Sprintf(`{"name":"grid","dataset":%s,"targets":[{"model":"acme/small-1b","runtime":"vllm","hardware":"l4-24gb-x1","matrix":%s}],
			"load":{"profile":"concurrency","concurrency":2},"sampling":{"max_tokens":16}%s}`, ds, matrix, search)
	}
	post := func(body string, dry bool) apiResult {
		path := "/api/v1/benchmarks"
		if dry {
			path += "?dry_run=true"
		}
		return e.api(http.MethodPost, path, tok, strings.NewReader(body), "application/json")
	}
	for matrix, want := range map[string]string{
		`{"max_num_seqs":[64,0]}`:              `targets[0].matrix.max_num_seqs[1]:max_num_seqs must be between 1 and 4096`,
		`{"tensor_parallel_size":[1,2]}`:       `targets[0].matrix.tensor_parallel_size[1]:tensor_parallel_size is 2 but the hardware has 1 GPUs`,
		`{"num_parallel":[1,4]}`:               `targets[0].matrix.num_parallel[0]:"num_parallel" is not an engine setting of vllm`,
		`{"max_num_seqs":[1,2,3,4,5,6,7,8,9]}`: "",
	} {
		res := post(manifest(matrix, ""), true)
		got := fmt.Sprint(res.body)
		if want == "" {
			if res.status != 200 {
				t.Errorf("%s: %d %s", matrix, res.status, got)
			}
			continue
		}
		path, msg, _ := strings.Cut(want, ":")
		if res.status != 422 || !strings.Contains(got, path) || !strings.Contains(got, msg) {
			t.Errorf("%s: %d %s, want 422 at %s saying %q", matrix, res.status, got, path, msg)
		}
	}
	// The search ranks as the configurations page does: goodput per
	// dollar under the benchmark's SLO on a priced profile.
	search := `,"slo":{"ttft":"100ms"},"search":{"budget_runs":5}`
	price := 1.0
	if err := e.store.SetHardwarePrice(ctx, "l4-24gb-x1", &price); err != nil {
		t.Fatal(err)
	}
	res := post(manifest(`{"max_num_seqs":[64,128,256]}`, search), true)
	var dry struct {
		Runs []struct {
			Engine map[string]string `json:"engine"`
			High   float64           `json:"estimated_seconds_high"`
			Rung   *int              `json:"search_rung"`
		} `json:"runs"`
		Search struct {
			Runs  int `json:"runs"`
			Rungs []struct {
				Configurations int `json:"configurations"`
			} `json:"rungs"`
		} `json:"search"`
	}
	remarshal(t, res.body, &dry)
	if res.status != 200 || len(dry.Runs) != 3 || dry.Runs[2].Engine["max_num_seqs"] != "256" || dry.Runs[0].High <= 0 ||
		dry.Runs[0].Rung == nil || dry.Search.Runs != 5 || len(dry.Search.Rungs) != 2 {
		t.Fatalf("dry run: %d %+v", res.status, res.body)
	}

	created := post(manifest(`{"max_num_seqs":[64,128,256]}`, search), false)
	if created.status != 201 {
		t.Fatalf("create: %d %v", created.status, created.body)
	}
	id := int64(created.body["benchmark_id"].(float64))
	// Two runs answered (the later one twice as fast), the third cancelled.
	for i, r := range created.body["run_ids"].([]any)[:2] {
		if _, err := e.store.Pool().Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, completion_tokens, sent_at, ttft_ms, e2e_ms)
			VALUES ($1, 0, 'c0', 'ok', 16, now(), 50, 100)`, int64(r.(float64))); err != nil {
			t.Fatal(err)
		}
		secs := 2.0 / float64(i+1)
		summary := fmt.Sprintf(`{"requests":1,"ok":1,"good_requests":1,"measured_seconds":%g,"requests_per_s":%g,"output_tokens_per_s":%g}`, secs, 1/secs, 16/secs)
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', measured_seconds = $2, finished_at = now(), summary = $3 WHERE id = $1`,
			int64(r.(float64)), secs, summary); err != nil {
			t.Fatal(err)
		}
		// The score job keeps the run's figures, which the cut waits for.
		if err := conclude.ComputeRunStats(ctx, e.store, int64(r.(float64))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'cancelled', finished_at = now() WHERE benchmark_id = $1 AND state = 'queued'`, id); err != nil {
		t.Fatal(err)
	}
	if n, err := testkit.Service(ctx, t, e.store, nil).DecideSearches(ctx); err != nil || n != 1 {
		t.Fatalf("decided %d rungs: %v", n, err)
	}
	got := e.api(http.MethodGet, fmt.Sprintf("/api/v1/benchmarks/%d", id), tok, nil, "")
	var b struct {
		Search struct {
			Done bool `json:"done"`
			Cuts []struct {
				Rung     int `json:"rung"`
				Keep     int `json:"keep"`
				Verdicts []struct {
					Config string `json:"configuration"`
					Reason string `json:"reason"`
				} `json:"verdicts"`
			} `json:"cuts"`
		} `json:"search"`
	}
	remarshal(t, got.body, &b)
	if got.status != 200 || b.Search.Done || len(b.Search.Cuts) != 1 || b.Search.Cuts[0].Keep != 2 || len(b.Search.Cuts[0].Verdicts) != 3 ||
		!strings.Contains(b.Search.Cuts[0].Verdicts[0].Config, "max_num_seqs=128") || b.Search.Cuts[0].Verdicts[2].Reason != "unmeasured" {
		t.Fatalf("benchmark JSON: %d %+v", got.status, got.body)
	}
	page := c.get(fmt.Sprintf("/benchmarks/%d", id))
	if page.doc.Find(`[data-testid="search"] [data-testid="search-verdict"]`).Length() != 3 ||
		!strings.Contains(page.text(`[data-testid="search-pending"]`), "1 of 2 rungs decided") ||
		!strings.Contains(page.text(`[data-testid="search"]`), "cut: its run ended without figures") {
		t.Errorf("the benchmark page's search: %q", page.text(`[data-testid="search"]`))
	}
}

// remarshal reads a decoded JSON body into out.
func remarshal(t *testing.T, body map[string]any, out any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// The form's matrix field: a list that does not parse, and a value the
// runtime refuses, are said beside it (in German too); a valid one
// previews a run per configuration with its engine settings and time.
func TestMatrixFromTheForm(t *testing.T) {
	t.Parallel()
	_, c, ds := formEnv(t)
	form := func(matrix string) url.Values {
		return url.Values{"name": {"Matrix"}, "dataset_id": {ds}, "max_tokens": {"64"}, "load_kind": {"sequential"}, "action": {"preview"},
			"target_0_model": {"acme/small-1b"}, "target_0_runtime": {"vllm"}, "target_0_hardware": {"l4-24gb-x1"},
			"target_0_matrix": {matrix}}
	}
	c.get("/benchmarks/new")
	bad := c.post("/benchmarks/new", form("max_num_seqs=64,0; tensor_parallel_size=1,2"))
	if got := bad.text(`[data-testid="target-0-engine"]`); bad.status != 422 || !strings.Contains(got, "max_num_seqs[1] max_num_seqs must be between 1 and 4096") {
		t.Errorf("refused value: %d %q", bad.status, got)
	}
	if got := c.post("/benchmarks/new", form("max_num_seqs")).text(`[data-testid="target-0-engine"]`); !strings.Contains(got, `"max_num_seqs" is not name=value,value`) {
		t.Errorf("unparsed list: %q", got)
	}
	c.getIn("/benchmarks/new", "de")
	if got := c.postIn("/benchmarks/new", "de", form("max_num_seqs=64,64")).text(`[data-testid="target-0-engine"]`); !strings.Contains(got, "derselbe Wert wie max_num_seqs[0]") {
		t.Errorf("German: %q", got)
	}
	c.getIn("/benchmarks/new", "en")
	ok := c.post("/benchmarks/new", form("max_num_seqs=64,128"))
	if ok.status != 200 || ok.doc.Find(`[data-testid="plan-run"]`).Length() != 2 || !strings.Contains(ok.text(`[data-testid="plan"]`), "max_num_seqs=128") ||
		ok.doc.Find(`[data-testid="plan-run-duration"]`).Length() != 2 {
		t.Errorf("preview: %d %q", ok.status, ok.text(`[data-testid="plan"]`))
	}
}

// A search on a profile without a price ranks nothing, as the
// configurations page ranks nothing there: its page says the search chose
// nothing and why, in English and in German, and each configuration was
// cut with the page's reason.
func TestSearchThatCannotRankSaysWhy(t *testing.T) {
	t.Parallel()
	e, c, ds := formEnv(t)
	ctx := context.Background()
	u, err := e.store.UserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"name":"grid","dataset":%s,"targets":[{"model":"acme/small-1b","runtime":"vllm","hardware":"l4-24gb-x1","matrix":{"max_num_seqs":[64,128]}}],
		"load":{"profile":"concurrency","concurrency":2},"sampling":{"max_tokens":16},"slo":{"ttft":"100ms"},"search":{"budget_runs":3}}`, ds)
	created := e.api(http.MethodPost, "/api/v1/benchmarks", e.token(u), strings.NewReader(body), "application/json")
	if created.status != 201 {
		t.Fatalf("create: %d %v", created.status, created.body)
	}
	id := int64(created.body["benchmark_id"].(float64))
	for _, r := range created.body["run_ids"].([]any) {
		run := int64(r.(float64))
		if _, err := e.store.Pool().Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, completion_tokens, sent_at, ttft_ms, e2e_ms)
			VALUES ($1, 0, 'c0', 'ok', 16, now(), 50, 100)`, run); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', measured_seconds = 1, finished_at = now(),
			summary = '{"requests":1,"ok":1,"good_requests":1,"measured_seconds":1,"requests_per_s":1,"output_tokens_per_s":16}' WHERE id = $1`, run); err != nil {
			t.Fatal(err)
		}
		if err := conclude.ComputeRunStats(ctx, e.store, run); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := testkit.Service(ctx, t, e.store, nil).DecideSearches(ctx); err != nil || n != 1 {
		t.Fatalf("decided %d rungs: %v", n, err)
	}
	en := c.get(fmt.Sprintf("/benchmarks/%d", id))
	if got := en.text(`[data-testid="search-unranked"]`); !strings.Contains(got, "The search chose nothing") || !strings.Contains(got, "l4-24gb-x1 has no price per hour") {
		t.Errorf("the page says %q", got)
	}
	if n := en.doc.Find(`[data-testid="search-best"]`).Length(); n != 0 {
		t.Errorf("the page names a choice")
	}
	outcomes := en.text(`[data-testid="search-outcome"]`)
	if strings.Count(outcomes, "cut: not ranked: the hardware profile l4-24gb-x1 has no price per hour") != 2 {
		t.Errorf("outcomes %q", outcomes)
	}
	de := c.getIn(fmt.Sprintf("/benchmarks/%d", id), "de")
	if !strings.Contains(de.body, "Die Suche hat nichts gewählt") || !strings.Contains(de.body, "das Hardwareprofil l4-24gb-x1 hat keinen Stundenpreis") {
		t.Errorf("the German page: %q", de.text(`[data-testid="search"]`))
	}
}
