package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// POST /api/v1/runs/{id}/score is the results page's rescore: it queues a
// score_run job with the scorer and options and answers 202 with them; a
// scorer Ruckus does not have, options that do not validate or unknown
// fields are 422 at their path and queue nothing; another user gets 404,
// a reader of a shared benchmark 403.
func TestAPIRescoreRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	bob := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	benchmarkID, runID := runWithResults(t, e, tok, 10, func(i int) string { return fmt.Sprint(i) })
	path := fmt.Sprintf("/api/v1/runs/%d/score", runID)
	jobs := func() []string {
		t.Helper()
		rows, err := e.store.Pool().Query(ctx, `SELECT args->>'scorer' || ' ' || coalesce(args->'scorer_options'->>'pattern', '-') FROM river_job
			WHERE kind = 'score_run' AND (args->>'run_id')::bigint = $1 ORDER BY id`, runID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	before := len(jobs())

	queued := []struct {
		body, scorer, options string
	}{
		{`{"scorer":"numeric"}`, "numeric", "null"},
		{`{"scorer":"regex","scorer_options":{"pattern":"#### (\\d+)"}}`, "regex", `{"pattern":"#### (\\d+)"}`},
	}
	for _, q := range queued {
		r := postJSON(e, path, tok, q.body)
		opts, _ := json.Marshal(r.body["scorer_options"])
		if r.status != 202 || r.body["run_id"] != float64(runID) || r.body["scorer"] != q.scorer || string(opts) != q.options {
			t.Fatalf("%s: %d %v", q.body, r.status, r.body)
		}
	}
	if got := jobs()[before:]; fmt.Sprint(got) != `[numeric - regex #### (\d+)]` {
		t.Fatalf("score_run jobs queued: %q", got)
	}

	// The benchmark's own scorer without options scores with the
	// benchmark's options, and says so.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE benchmarks SET manifest = manifest || '{"scorer":"regex","scorer_options":{"pattern":"=(\\d)"}}'
		WHERE id = $1`, benchmarkID); err != nil {
		t.Fatal(err)
	}
	if r := postJSON(e, path, tok, `{"scorer":"regex"}`); r.status != 202 || fmt.Sprint(r.body["scorer_options"]) != `map[pattern:=(\d)]` {
		t.Fatalf("the benchmark's own scorer: %d %v", r.status, r.body)
	}
	before = len(jobs())

	refused := []struct {
		body, path string
	}{
		{`{"scorer":"meteor"}`, "scorer"},
		{`{"scorer":""}`, "scorer"},
		{`{"scorer":"regex","scorer_options":{"pattern":"(unclosed"}}`, "scorer_options.pattern"},
		{`{"scorer":"numeric","scorer_options":{"pattern":"(\\d+)"}}`, "scorer_options.pattern"},
		{`{"scorer":"json-schema","scorer_options":{"schema":{"type":"nope"}}}`, "scorer_options.schema"},
		{`{"scorer":"numeric","scorer_options":{"judge":{}}}`, ""},
		{`{"scorer":"numeric","then":1}`, ""},
		{`{"scorer":7}`, "scorer"},
	}
	for _, tc := range refused {
		r := postJSON(e, path, tok, tc.body)
		errs, _ := r.body["errors"].([]any)
		if r.status != 422 || len(errs) == 0 {
			t.Fatalf("%s: %d %v", tc.body, r.status, r.body)
		}
		first := errs[0].(map[string]any)
		if first["message"] == "" || (tc.path != "" && first["path"] != tc.path) {
			t.Errorf("%s: errors %v, want one at %q", tc.body, errs, tc.path)
		}
	}
	if got := jobs()[before:]; len(got) != 0 {
		t.Fatalf("refused rescores queued %q", got)
	}

	// Another user: no such run. Shared with them: readable, but theirs
	// to rescore only if they own it.
	if r := postJSON(e, path, bob, `{"scorer":"numeric"}`); r.status != 404 {
		t.Fatalf("another user's run: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodPatch, "/api/v1/benchmarks/"+benchmarkID, tok, strings.NewReader(`{"visibility":"shared"}`), "application/json"); r.status != 200 {
		t.Fatalf("share: %d %v", r.status, r.body)
	}
	if r := postJSON(e, path, bob, `{"scorer":"numeric"}`); r.status != 403 {
		t.Fatalf("a reader of a shared benchmark: %d %v", r.status, r.body)
	}
	if got := jobs()[before:]; len(got) != 0 {
		t.Fatalf("another user's rescore queued %q", got)
	}
	if r := postJSON(e, fmt.Sprintf("/api/v1/runs/%d/score", runID+1000), tok, `{"scorer":"numeric"}`); r.status != 404 {
		t.Fatalf("no such run: %d", r.status)
	}
}
