package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// endRun marks the run completed, as its agent does, and signs it, as the
// server's scoring job does first.
func endRun(t *testing.T, e *env, runID int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now() WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	if err := e.attest.AttestRun(ctx, runID); err != nil {
		t.Fatal(err)
	}
}

// A finished run's results are signed; the API, the page and the exports
// show the digest; one stored row changed afterwards makes verification
// fail and names that row, and scoring the run again does not sign the
// change.
func TestChangedResultRowFailsVerificationNamingIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	bID, runID := runWithResults(t, e, tok, 30, func(i int) string { return fmt.Sprintf("answer %d", i) })
	path := fmt.Sprintf("/api/v1/runs/%d/attestation", runID)
	if r := e.api(http.MethodGet, path, tok, nil, ""); r.status != 404 || !strings.Contains(fmt.Sprint(r.body["error"]), "no attestation yet") {
		t.Fatalf("before the run ends: %d %v", r.status, r.body)
	}
	endRun(t, e, runID)

	ok := e.api(http.MethodGet, path, tok, nil, "")
	digest, _ := ok.body["digest"].(string)
	if ok.status != 200 || ok.body["valid"] != true || ok.body["rows"] != float64(30) || !strings.HasPrefix(digest, "sha256:") ||
		ok.body["current_digest"] != digest || ok.body["first_difference"] != nil {
		t.Fatalf("intact run: %d %v", ok.status, ok.body)
	}
	if _, h := apiHeader(t, e, fmt.Sprintf("/api/v1/runs/%d/results?format=csv", runID), tok, "X-Ruckus-Results-Digest"); h != digest {
		t.Fatalf("run export carries %q, want %q", h, digest)
	}
	if _, h := apiHeader(t, e, "/api/v1/benchmarks/"+bID+"/export", tok, "X-Ruckus-Results-Digests"); h != fmt.Sprintf("%d=%s", runID, digest) {
		t.Fatalf("benchmark export carries %q", h)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/runs/%d", runID))
	if href, _ := page.doc.Find(`[data-testid="verify-run"]`).Attr("hx-get"); href != fmt.Sprintf("/runs/%d/attestation", runID) {
		t.Fatalf("the results page offers no verification: %q", href)
	}
	frag := c.get(fmt.Sprintf("/runs/%d/attestation", runID))
	if st := frag.text(`[data-testid="attestation-state"]`); frag.status != 200 || !strings.Contains(st, "intact") || frag.text(`[data-testid="attestation-digest"]`) != digest {
		t.Fatalf("verification on the page: %d %q", frag.status, st)
	}

	// One measured figure of one row is changed in the database.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET e2e_ms = e2e_ms - 1 WHERE run_id = $1 AND idx = 17`, runID); err != nil {
		t.Fatal(err)
	}
	bad := e.api(http.MethodGet, path, tok, nil, "")
	first, _ := bad.body["first_difference"].(map[string]any)
	if bad.status != 200 || bad.body["valid"] != false || first["idx"] != float64(17) || first["custom_id"] != "c017" || first["change"] != "changed" ||
		!strings.Contains(fmt.Sprint(bad.body["problem"]), "idx 17") || bad.body["current_digest"] == digest {
		t.Fatalf("a changed row: %d %v", bad.status, bad.body)
	}
	frag = c.get(fmt.Sprintf("/runs/%d/attestation", runID))
	if st := frag.text(`[data-testid="attestation-state"]`); !strings.Contains(st, "changed") || !strings.Contains(st, `idx 17 sample 0 (custom_id "c017") differs`) {
		t.Fatalf("the page after the change: %q", st)
	}
	// Scoring again (the same job) does not sign the changed rows.
	if err := e.attest.AttestRun(ctx, runID); err != nil {
		t.Fatal(err)
	}
	if again := e.api(http.MethodGet, path, tok, nil, ""); again.body["valid"] != false {
		t.Fatalf("a rescoring signed the change: %v", again.body)
	}
	// Scores are derived, not measured: a new score is not a change.
	for _, q := range []string{`UPDATE results SET e2e_ms = e2e_ms + 1 WHERE run_id = $1 AND idx = 17`,
		`UPDATE results SET score = 1 - coalesce(score, 0) WHERE run_id = $1`} {
		if _, err := e.store.Pool().Exec(ctx, q, runID); err != nil {
			t.Fatal(err)
		}
	}
	if back := e.api(http.MethodGet, path, tok, nil, ""); back.body["valid"] != true {
		t.Fatalf("the row put back, scores changed: %v", back.body)
	}
	// A row deleted, then one added, are named too.
	if _, err := e.store.Pool().Exec(ctx, `DELETE FROM results WHERE run_id = $1 AND idx = 4`, runID); err != nil {
		t.Fatal(err)
	}
	gone := e.api(http.MethodGet, path, tok, nil, "")
	if first, _ := gone.body["first_difference"].(map[string]any); first["idx"] != float64(4) || first["change"] != "removed" {
		t.Fatalf("a deleted row: %v", gone.body)
	}
	if _, err := e.store.Pool().Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, sent_at) VALUES ($1, 4, 'c004', 'ok', now()),
		($1, 99, 'forged', 'ok', now())`, runID); err != nil {
		t.Fatal(err)
	}
	added := e.api(http.MethodGet, path, tok, nil, "")
	if first, _ := added.body["first_difference"].(map[string]any); first["idx"] != float64(4) || first["change"] != "changed" {
		t.Fatalf("a row put back with other figures: %v", added.body)
	}

	// Another user is told the run does not exist.
	bob := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	if r := e.api(http.MethodGet, path, bob, nil, ""); r.status != 404 {
		t.Fatalf("bob: %d", r.status)
	}
}

// A run that ended before its first result is signed over no rows, and
// verifies: its scoring job must not fail on it.
func TestRunWithoutResultsIsSigned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("empty@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 3, func(i int) string { return fmt.Sprintf("answer %d", i) })
	// As cancelled before its agent wrote anything.
	for _, q := range []string{`DELETE FROM results WHERE run_id = $1`, `UPDATE runs SET state = 'cancelled', completed = 0, finished_at = now() WHERE id = $1`} {
		if _, err := e.store.Pool().Exec(ctx, q, runID); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.attest.AttestRun(ctx, runID); err != nil {
		t.Fatalf("sign a run without results: %v", err)
	}
	r := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d/attestation", runID), tok, nil, "")
	if r.status != 200 || r.body["valid"] != true || r.body["rows"] != float64(0) {
		t.Fatalf("the empty run's attestation: %d %v", r.status, r.body)
	}
}
