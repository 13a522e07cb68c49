package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/handlers"
	"github.com/ruckus/ruckus/jobs"
)

// The benchmark page shows each run's live progress in a fragment that
// polls itself while runs are active and stops once they have finished;
// the API reports the same figures.
func TestRunProgressFragmentAndAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(u)
	ds := e.upload(tok, "q.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"p","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, ds.body["dataset_id"])
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	runID := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	var jobID int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&jobID); err != nil {
		t.Fatal(err)
	}

	// Queued, with nothing yet to time it: the page says why it has no ETA.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	waiting := c.get("/benchmarks/" + b)
	if waiting.text(`[data-testid="benchmark-eta"]`) != "unknown" || waiting.text(`[data-testid="benchmark-progress"]`) != "0 %" ||
		waiting.text(`[data-testid="benchmark-eta-reason"]`) != "(no run of this benchmark has finished yet to time one)" {
		t.Fatalf("queued: ETA %q %q", waiting.text(`[data-testid="benchmark-eta"]`), waiting.text(`[data-testid="benchmark-eta-reason"]`))
	}

	// The agent takes the run, stores one result and reports progress.
	claim, err := e.store.ClaimRun(ctx, runID, agent.ID, jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	res := store.ResultRecord{Result: jobs.Result{Idx: 0, CustomID: "a", Status: jobs.StatusOK, CompletionTokens: 8, ContentEvents: 8,
		TTFT: 10 * time.Millisecond, E2E: 50 * time.Millisecond}, SentAt: time.Now()}
	if _, err := e.store.WriteResults(ctx, claim.Lease, []store.ResultRecord{res}); err != nil {
		t.Fatal(err)
	}
	eta := 3 * time.Second
	if err := e.store.UpdateProgress(ctx, claim.Lease, store.Progress{Throughput: 42.5, RequestsPerS: 2, ETA: &eta}, store.Sample{At: time.Now()}); err != nil {
		t.Fatal(err)
	}

	page := c.get("/benchmarks/" + b)
	if page.doc.Find(`#runs[data-polling="on"][hx-trigger="every 2s"]`).Length() != 1 {
		t.Fatal("an active benchmark's runs table does not poll")
	}
	active := c.get("/benchmarks/active")
	if active.text(fmt.Sprintf(`[data-testid="active-run-%d"] [data-testid="active-completed"]`, runID)) != "1 / 3" || active.header.Get("HX-Refresh") != "" {
		t.Fatalf("active fragment: %q", active.text("table"))
	}
	frag := c.get("/benchmarks/" + b + "/runs")
	row := fmt.Sprintf(`[data-testid="run-%d"] `, runID)
	if frag.status != 200 || frag.text(row+`[data-testid="run-completed"]`) != "1 / 3" || frag.text(row+`[data-testid="run-throughput"]`) != "42.5" ||
		frag.text(row+`[data-testid="run-eta"]`) != "3s" || frag.text(row+`[data-testid="run-state"]`) != "running" {
		t.Fatalf("fragment: %d %q %q %q", frag.status, frag.text(row+`[data-testid="run-completed"]`), frag.text(row+`[data-testid="run-throughput"]`), frag.text(row+`[data-testid="run-eta"]`))
	}
	if frag.doc.Find("nav").Length() != 0 {
		t.Fatal("the fragment is a whole page")
	}
	api := e.api(http.MethodGet, "/api/v1/benchmarks/"+b, tok, nil, "")
	run := api.body["runs"].([]any)[0].(map[string]any)
	if run["progress"] != 33.0 || run["completed"] != 1.0 || run["throughput"] != 42.5 || run["eta_seconds"] != 3.0 || run["agent"] != "cpu-1" {
		t.Fatalf("API run: %v", run)
	}
	// The benchmark's own figures, the same on its page and in the API.
	if api.body["status"] != "running" || api.body["progress"] != 33.0 || api.body["eta_seconds"] != 3.0 || api.body["eta_reason"] != nil {
		t.Fatalf("API benchmark: %v %v %v %v", api.body["status"], api.body["progress"], api.body["eta_seconds"], api.body["eta_reason"])
	}
	if frag.text(`[data-testid="benchmark-progress"]`) != "33 %" || frag.text(`[data-testid="benchmark-eta"]`) != "3s" ||
		page.text(`[data-testid="benchmark-eta"]`) != "3s" || page.doc.Find(`[data-testid="benchmark-eta-reason"]`).Length() != 0 {
		t.Fatalf("page: %q, ETA %q", frag.text(`[data-testid="benchmark-progress"]`), frag.text(`[data-testid="benchmark-eta"]`))
	}
	// GET /runs/{id} gives the same integers.
	one := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", runID), tok, nil, "")
	if one.body["progress"] != 33.0 || one.body["eta_seconds"] != 3.0 {
		t.Fatalf("API run alone: %v %v", one.body["progress"], one.body["eta_seconds"])
	}

	// Finished: the table stops polling.
	if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed"}); err != nil {
		t.Fatal(err)
	}
	frag = c.get("/benchmarks/" + b + "/runs")
	if frag.doc.Find(`#runs[hx-get]`).Length() != 0 || frag.text(row+`[data-testid="run-state"]`) != "completed" {
		t.Fatal("a finished benchmark's runs table still polls")
	}
	// The list moves it from Active to Completed; the polling fragment
	// asks htmx to reload the page once nothing is active.
	list := c.get("/benchmarks")
	if list.doc.Find(`#active-runs[hx-get]`).Length() != 0 || list.doc.Find(`[data-testid="benchmark-`+b+`"]`).Length() != 1 {
		t.Fatal("a finished benchmark is not under Completed")
	}
	req := httptest.NewRequest(http.MethodGet, "/benchmarks/active", nil)
	req.Header.Set("HX-Request", "true")
	if res := c.do(req); res.header.Get("HX-Refresh") != "true" || res.doc.Find(`[data-testid="no-active"]`).Length() != 1 {
		t.Fatalf("active fragment when nothing is active: %v", res.header)
	}
	e.createUser("eve@example.com", "correct horse", store.RoleUser)
	other := e.client()
	other.signIn("eve@example.com", "correct horse")
	if res := other.get("/benchmarks/" + b + "/runs"); res.status != 404 {
		t.Fatalf("another user's fragment: %d", res.status)
	}
}

// With sharing on, a benchmark's runs table and run cards are rendered
// once per TTL and the same bytes go to every viewer allowed to see them:
// without anyone's CSRF token (the buttons post through htmx with the
// header), never to another user, and dropped when this server cancels a
// run so the next poll shows it.
func TestLiveFragmentsAreSharedByViewers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *handlers.Deps) { d.LiveFragmentTTL = time.Hour })
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	e.createUser("eve@example.com", "correct horse", store.RoleUser)
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	b, runID := runWithResults(t, e, tok, 10, func(i int) string { return "x" })
	runsURL := "/benchmarks/" + b + "/runs"
	cardURL := fmt.Sprintf("/benchmarks/%s/runs/%d/card", b, runID)
	row := fmt.Sprintf(`[data-testid="run-%d"] `, runID)

	ada := e.client()
	ada.signIn("ada@example.com", "correct horse")
	first := ada.get(runsURL)
	if got := first.text(row + `[data-testid="run-completed"]`); got != "10 / 10" {
		t.Fatalf("runs table: %q", got)
	}
	cancel := first.doc.Find(fmt.Sprintf(`form[hx-post="/benchmarks/%s/runs/%d/cancel"]`, b, runID))
	if cancel.Length() != 1 || cancel.Find(`input[name="_csrf"]`).Length() != 0 {
		t.Fatalf("a shared fragment's cancel button must post through htmx and carry no token: %s", first.body)
	}
	if ada.get(cardURL).text(`[data-testid="card-completed"]`) != "10 / 10" {
		t.Fatal("card")
	}

	// The run moves on; within the TTL every viewer gets the same bytes.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET completed = 4 WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	if again := ada.get(runsURL); again.body != first.body {
		t.Fatal("the runs table was rendered again within the TTL")
	}
	if got := ada.get(cardURL).text(`[data-testid="card-completed"]`); got != "10 / 10" {
		t.Fatalf("card rendered again within the TTL: %q", got)
	}
	admin := e.client()
	admin.signIn("root@example.com", "correct horse")
	if res := admin.get(runsURL); res.status != 200 || res.body != first.body {
		t.Fatalf("an admin gets %d, not the shared fragment", res.status)
	}
	// Each language has its own copy: an admin reading German within the
	// TTL gets German words, not the English bytes kept for the others.
	if de := admin.getIn(runsURL, "de"); de.body == first.body || de.text(row+`[data-testid="run-completed"]`) != "4 / 10" {
		t.Fatalf("a German reader gets the English fragment (or a stale one): %.300s", de.body)
	}
	if again := ada.get(runsURL); again.body != first.body {
		t.Fatal("the German copy replaced the English one")
	}
	eve := e.client()
	eve.signIn("eve@example.com", "correct horse")
	for _, u := range []string{runsURL, cardURL} {
		if res := eve.get(u); res.status != 404 || strings.Contains(res.body, "10 / 10") {
			t.Fatalf("another user reads a shared fragment %s: %d", u, res.status)
		}
	}

	// A cancel through this server drops the benchmark's fragments; the
	// button works with the header htmx sends (the page's token).
	ada.get("/benchmarks/" + b)
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/benchmarks/%s/runs/%d/cancel", b, runID), nil)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", ada.csrf)
	if res := ada.do(req); res.status != 204 || res.header.Get("HX-Redirect") != "/benchmarks/"+b {
		t.Fatalf("cancel through htmx: %d %v", res.status, res.header)
	}
	after := ada.get(runsURL)
	if got := after.text(row + `[data-testid="run-state"]`); got != "cancelled" {
		t.Fatalf("after cancel the runs table shows %q", got)
	}
	if got := after.text(row + `[data-testid="run-completed"]`); got != "4 / 10" {
		t.Fatalf("after cancel the runs table shows %q done", got)
	}
	if got := ada.get(cardURL).text(`[data-testid="card-state"]`); got != "cancelled" {
		t.Fatalf("after cancel the card shows %q", got)
	}
	// A button from a table that was out of date: htmx swaps no error, so
	// the refusal comes as a message on the page it is sent back to.
	ada.get("/benchmarks/" + b)
	req = httptest.NewRequest(http.MethodPost, fmt.Sprintf("/benchmarks/%s/runs/%d/cancel", b, runID), nil)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", ada.csrf)
	if res := ada.do(req); res.status != 204 || res.header.Get("HX-Redirect") != "/benchmarks/"+b {
		t.Fatalf("a refused cancel through htmx: %d %v", res.status, res.header)
	}
	if got := ada.get("/benchmarks/" + b).text(`[data-testid="flash"]`); got != "That run cannot be cancelled in its present state." {
		t.Fatalf("flash after a refused cancel: %q", got)
	}
}
