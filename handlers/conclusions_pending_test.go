package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/jobs"
)

// A benchmark is finished when its conclusions are complete, by one rule
// on every surface: the verdict page and API, the start page and
// benchmark.finished wait, however long, for every run's score job —
// told once, by the last run concluded, even before River has marked that
// run's job done; a scoring that fails for good ends the wait and is said
// (docs/verdict.md#when-a-verdict-is-final).
func TestBenchmarkIsFinishedOnlyWhenConcluded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	if r := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(
		`{"url":"https://hooks.example.com/done","secret":"sixteen bytes or more","events":["benchmark.finished"]}`), "application/json"); r.status != 201 {
		t.Fatalf("webhook: %d %v", r.status, r.body)
	}
	_, a := runWithResults(t, e, tok, 6, func(i int) string { return fmt.Sprint(i) })
	var ds int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = $1`, a).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(fmt.Sprintf(`{"name":"twice","dataset":%d,
		"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8},"repeats":2}`, ds)),
		"application/json")
	if r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	rc := insertOnly(t, e)
	var runs, jobIDs []int64
	for _, x := range r.body["runs"].([]any) {
		run := int64(x.(map[string]any)["run_id"].(float64))
		finishAsAgent(t, e, run, func(i int, _ string) string { return fmt.Sprint(i) })
		sum, err := summary.Run(ctx, e.store, run, jobs.SLO{}, 6*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(sum)
		// Ended ten minutes ago, its score job still to run (as its agent
		// queues it when the run ends).
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2, finished_at = now() - interval '10 minutes' WHERE id = $1`, run, raw); err != nil {
			t.Fatal(err)
		}
		res, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: run}, nil)
		if err != nil {
			t.Fatal(err)
		}
		runs, jobIDs = append(runs, run), append(jobIDs, res.Job.ID)
	}
	ada2 := e.client()
	ada2.signIn("ada@example.com", "correct horse")
	verdict := func() (bool, string) {
		t.Helper()
		v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
		return v.body["pending"] == true, fmt.Sprint(v.body["reason"])
	}
	finished := func() int {
		t.Helper()
		got, err := e.store.WebhookDeliveries(ctx, ada.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	if p, why := verdict(); !p || !strings.Contains(why, fmt.Sprintf("run %d's figures and intervals are being kept", runs[0])) {
		t.Fatalf("the verdict API before scoring: %v %q", p, why)
	}
	if got := ada2.get("/benchmarks/" + b + "/verdict").text(`[data-testid="verdict-pending-reason"]`); !strings.Contains(got, "being kept") {
		t.Errorf("the verdict before scoring: %q", got)
	}
	if got := ada2.get("/").text(`[data-testid="recent-` + b + `"] [data-testid="recent-verdict"]`); !strings.Contains(got, "being computed") {
		t.Errorf("the start page before scoring: %q", got)
	}

	// The recommendation, the report and the configurations say so too.
	surfaces := func() map[string]any {
		t.Helper()
		return map[string]any{
			"recommendation": e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/recommendation", tok, nil, "").body["pending"],
			"report":         e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/report.html?format=json", tok, nil, "").body["pending"],
			"configurations": e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/configurations", tok, nil, "").body["pending"],
			"recommend page": ada2.get("/benchmarks/"+b+"/recommend").doc.Find(`[data-testid="recommend-pending"]`).Length() == 1,
			"report page":    ada2.get("/benchmarks/"+b+"/report.html").doc.Find(`[data-testid="report-pending"]`).Length() == 1,
		}
	}
	for name, pending := range surfaces() {
		if pending != true {
			t.Errorf("%s before scoring: pending %v", name, pending)
		}
	}

	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store}, Regressions: &regress.Checker{Store: e.store},
		Stats: conclude.Keeper{Store: e.store}, Notifier: &notify.Notifier{Store: e.store, River: rc}}
	work := func(i int) {
		t.Helper()
		if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: jobIDs[i]}, Args: jobs.ScoreRunArgs{RunID: runs[i]}}); err != nil {
			t.Fatal(err)
		}
	}
	work(0)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, jobIDs[0]); err != nil {
		t.Fatal(err)
	}
	if p, why := verdict(); !p || !strings.Contains(why, fmt.Sprintf("run %d", runs[1])) || finished() != 0 {
		t.Fatalf("with one score job left: pending %v %q, %d told", p, why, finished())
	}
	// The last job concludes its run; River has not marked it done yet.
	work(1)
	if p, why := verdict(); p || finished() != 1 {
		t.Fatalf("concluded: pending %v %q, %d told", p, why, finished())
	}
	if got := ada2.get("/").text(`[data-testid="recent-` + b + `"] [data-testid="recent-verdict"]`); strings.Contains(got, "being computed") {
		t.Errorf("the start page once concluded: %q", got)
	}
	for name, pending := range surfaces() {
		if pending != false {
			t.Errorf("%s once concluded: pending %v", name, pending)
		}
	}

	// A rescoring is waited for too; once it fails for good, the verdict
	// is drawn without it and says so.
	if res := postJSON(e, fmt.Sprintf("/api/v1/runs/%d/score", runs[1]), tok, `{"scorer":"numeric"}`); res.status != 202 {
		t.Fatalf("rescore: %d %v", res.status, res.body)
	}
	if p, why := verdict(); !p || !strings.Contains(why, "being scored") {
		t.Fatalf("while rescoring: %v %q", p, why)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now()
		WHERE kind = 'score_run' AND args @> jsonb_build_object('run_id', $1::bigint) AND state = 'available'`, runs[1]); err != nil {
		t.Fatal(err)
	}
	if p, why := verdict(); p || !strings.Contains(why, fmt.Sprintf("scoring failed for run %d", runs[1])) {
		t.Fatalf("after the rescoring failed: %v %q", p, why)
	}
}
