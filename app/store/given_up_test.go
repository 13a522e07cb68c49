package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
)

// A run whose score job River gave up is returned until a newer
// concluding job of it exists, and a conclusion queued for it and given
// up in turn does not bring it back. A discarded job of another kind
// whose run_id is no number is no run of anyone's, and does not fail the
// look (docs/verdict.md#when-a-verdict-is-final).
func TestGivenUpUnconcludedRuns(t *testing.T) {
	t.Parallel()
	st, b := setupStore(t)
	ctx := b.ctx
	f := createRun(t, st, b, 4)
	c, err := st.ClaimRun(ctx, f.runID, f.agent.ID, f.jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, c.Lease, store.Finish{State: "completed", StoppedBy: "completed"}); err != nil {
		t.Fatal(err)
	}
	job := func(kind, args, state string, tags ...string) {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, `INSERT INTO river_job (kind, args, state, queue, max_attempts, finalized_at, tags)
			VALUES ($1, $2::jsonb, $3::river_job_state, 'server', 1, CASE WHEN $3 IN ('discarded', 'cancelled', 'completed') THEN now() END, $4)`,
			kind, args, state, append([]string{}, tags...)); err != nil {
			t.Fatal(err)
		}
	}
	look := func() []int64 {
		t.Helper()
		got, err := st.GivenUpUnconcluded(ctx, time.Hour, "given_up")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	job("webhook_deliver", `{"run_id":"not a number"}`, "discarded")
	job("score_run", `{"run_id":"12a"}`, "discarded")
	if got := look(); len(got) != 0 {
		t.Fatalf("nothing given up yet: %v", got)
	}
	job("score_run", fmt.Sprintf(`{"run_id":%d}`, f.runID), "discarded")
	if got := look(); !slices.Equal(got, []int64{f.runID}) {
		t.Fatalf("after its score job was given up: %v", got)
	}
	job("conclude_run", fmt.Sprintf(`{"run_id":%d}`, f.runID), "available", "given_up")
	if got := look(); len(got) != 0 {
		t.Fatalf("with its conclusion queued: %v", got)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE kind = 'conclude_run'`); err != nil {
		t.Fatal(err)
	}
	if got := look(); len(got) != 0 {
		t.Fatalf("after its conclusion was given up: %v", got)
	}
}
