package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// importedRun stores a dataset of n items and results for them as a
// finished run, and returns the run's id; queue runs in the import's
// transaction (nil: nothing).
func importedRun(t *testing.T, st *store.Store, n int, queue func(pgx.Tx, int64, store.NewImport) error) int64 {
	t.Helper()
	ctx := context.Background()
	// The first import makes its owner and model; a later one reuses them.
	u, err := st.UserByEmail(ctx, "ops@example.com")
	if errors.Is(err, store.ErrNotFound) {
		u = testkit.User(ctx, t, st, &testkit.UserOpts{Email: "ops@example.com"})
		testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "m/x", ParamsB: 1, Quantization: "bf16"})
	} else if err != nil {
		t.Fatal(err)
	}
	var items, outputs strings.Builder
	for i := range n {
		fmt.Fprintf(&items, "{\"id\":\"q%d\",\"prompt\":\"question %d\"}\n", i, i)
		fmt.Fprintf(&outputs, "{\"custom_id\":\"q%d\",\"output\":\"answer %d\"}\n", i, i)
	}
	v := store.Viewer{UserID: u.ID}
	ds := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: v.UserID, Content: items.String()})
	res, err := (&ingest.Uploader{Store: st}).Upload(ctx, ingest.Source{File: strings.NewReader(outputs.String()),
		Then: func(tx pgx.Tx, res ingest.Result, req ingest.Request) error {
			if queue == nil {
				return nil
			}
			return queue(tx, res.Run.RunID, store.NewImport{DatasetID: req.DatasetID, Name: req.Name, Model: req.Model, Scorer: req.Scorer})
		}}, ingest.Request{Kind: ingest.Results, Viewer: v, DatasetID: ds.ID, Name: "imported", Model: "m/x"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Run.RunID
}

// ruckus verify RUN recomputes a signed run's digest from the database:
// intact, it says so; one row changed, it fails naming the row; a pinned
// key that is not the server's fails too.
func TestVerifyCommandNamesTheChangedRow(t *testing.T) {
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	ctx := context.Background()
	t.Setenv("DATABASE_URL", pgtest.URL(t, pool))
	runID := importedRun(t, st, 12, nil)
	id := fmt.Sprint(runID)

	if code, _, errOut := runCLI(t, "verify", id); code != 1 || !strings.Contains(errOut, "no attestation key") {
		t.Fatalf("before the server made a key: %d %q", code, errOut)
	}
	svc, err := newAttester(ctx, st, config.Config{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "verify", id); code != 1 || !strings.Contains(errOut, "no attestation yet") {
		t.Fatalf("before the run was signed: %d %q", code, errOut)
	}
	if err := svc.AttestRun(ctx, runID); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "verify", id)
	if code != 0 || !strings.Contains(out, "12 result rows") || !strings.Contains(out, "intact") {
		t.Fatalf("intact: %d %q %q", code, out, errOut)
	}
	if _, err := pool.Exec(ctx, `UPDATE results SET output = 'a better answer' WHERE run_id = $1 AND idx = 5`, runID); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "verify", id)
	if code != 1 || !strings.Contains(errOut, `verification failed: run `+id+`: result row idx 5 sample 0 (custom_id "q5") differs from the signed one`) {
		t.Fatalf("changed: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "verify", id, "--public-key", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="); code != 1 || !strings.Contains(errOut, "not the --public-key given") {
		t.Fatalf("another key pinned: %d %q", code, errOut)
	}
	// Several runs at once: each is checked and told, the exit says any failed.
	other := importedRun(t, st, 3, nil)
	if err := svc.AttestRun(ctx, other); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "verify", fmt.Sprint(other), id)
	if code != 1 || !strings.Contains(out, "3 result rows") || !strings.Contains(out, "intact") ||
		!strings.Contains(out, "run "+id+": result row idx 5") || !strings.Contains(errOut, "1 of 2 runs") {
		t.Fatalf("two runs, one changed: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "verify", fmt.Sprint(other), fmt.Sprint(other)); code != 0 || strings.Count(out, "intact") != 2 {
		t.Fatalf("two intact: %d %q %q", code, out, errOut)
	}
	for _, bad := range [][]string{{"verify"}, {"verify", "x"}, {"verify", "0"}, {"verify", "1", "x"}, {"verify", "--public-key", "k"}} {
		if code, _, _ := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// A run that ends is signed by the server's scoring job, and the API
// checks it.
func TestServerSignsAFinishedRun(t *testing.T) {
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	ctx := context.Background()
	rc := testkit.RiverClient(t.Context(), t, pool, nil)
	runID := importedRun(t, st, 5, func(tx pgx.Tx, id int64, _ store.NewImport) error {
		_, err := rc.InsertTx(ctx, tx, jobs.ScoreRunArgs{RunID: id}, nil)
		return err
	})
	public := startServer(t, testServerConfig(t, pool))
	testkit.WaitFor(t, "the server to sign the finished run", func() bool {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM run_attestations WHERE run_id = $1`, runID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
	var userID int64
	if err := pool.QueryRow(ctx, `SELECT id FROM users WHERE email = 'ops@example.com'`).Scan(&userID); err != nil {
		t.Fatal(err)
	}
	tok, prefix, hash := auth.NewAPIToken()
	if _, err := st.CreateAPIToken(ctx, userID, "t", prefix, hash); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/api/v1/runs/%d/attestation", public, runID), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Valid bool   `json:"valid"`
		Rows  int    `json:"rows"`
		Key   string `json:"public_key"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 || !body.Valid || body.Rows != 5 {
		t.Fatalf("attestation: %d %+v %v", res.StatusCode, body, err)
	}
	// ruckus verify uses the same key the server signed with.
	t.Setenv("DATABASE_URL", pgtest.URL(t, pool))
	if code, out, errOut := runCLI(t, "verify", fmt.Sprint(runID), "--public-key", body.Key); code != 0 || !strings.Contains(out, "intact") {
		t.Fatalf("verify: %d %q %q", code, out, errOut)
	}
}
