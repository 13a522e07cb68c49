package score_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A finished run is scored with its benchmark's scorer: per-item scores,
// failed requests as 0, and the run's mean with its bootstrap interval;
// scoring again with another scorer replaces them.
func TestScoreRunStoresItemScoresAndQuality(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	u := testkit.User(ctx, t, st, nil)
	v := store.Viewer{UserID: u.ID}
	var ds strings.Builder
	for i := range 40 {
		fmt.Fprintf(&ds, "{\"custom_id\":\"q%d\",\"prompt\":\"%d+%d?\",\"reference\":\"%d\"}\n", i, i, i, 2*i)
	}
	res := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: u.ID, Content: ds.String()})
	testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "m", ParamsB: 1, Quantization: "bf16"})
	a := testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: "a"})
	p := testkit.Service(ctx, t, st, nil)
	c, err := p.Create(ctx, v, bench.Manifest{Name: "s", Dataset: bench.DatasetRef{ID: res.ID}, Scorer: "numeric",
		Targets: []bench.Target{{Model: "m", Runtime: "sim", Hardware: "cpu"}}, Load: jobs.LoadProfile{Profile: jobs.LoadSequential},
		Sampling: jobs.Sampling{MaxTokens: 8}})
	if err != nil {
		t.Fatal(err)
	}
	runID := c.Runs[0].RunID
	b, _ := st.BenchmarkByID(ctx, v, c.BenchmarkID)
	claim, err := st.ClaimRun(ctx, runID, a.ID, *b.Runs[0].RiverJobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for i := range 40 {
		r := jobs.Result{Idx: i, CustomID: fmt.Sprintf("q%d", i), Status: jobs.StatusOK, Output: fmt.Sprintf("It is %d.", 2*i)}
		switch {
		case i%4 == 1: // wrong
			r.Output = fmt.Sprintf("It is %d.", 2*i+1)
		case i%10 == 9: // failed
			r = jobs.Result{Idx: i, CustomID: r.CustomID, Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP5xx}
		}
		rs = append(rs, store.ResultRecord{Result: r, SentAt: time.Now()})
	}
	if _, err := st.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	svc := &score.Service{Store: st}
	if err := svc.ScoreRun(ctx, runID, ""); err != nil {
		t.Fatal(err)
	}
	var scorer string
	var scored int
	var q, lo, hi float64
	read := func() {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT scorer, scored, quality, quality_lo, quality_hi FROM runs WHERE id = $1`, runID).
			Scan(&scorer, &scored, &q, &lo, &hi); err != nil {
			t.Fatal(err)
		}
	}
	read()
	// 40 items: 10 wrong (i%4 == 1), 4 failed (i%10 == 9; 9 and 29 are also
	// wrong), so 40 − 10 − 2 = 28 right.
	if scorer != "numeric" || scored != 40 || q != 28.0/40 || !(lo < q && q < hi) {
		t.Fatalf("quality %s %d %v [%v, %v]", scorer, scored, q, lo, hi)
	}
	var one, zero int
	_ = st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE score = 1), count(*) FILTER (WHERE score = 0) FROM results WHERE run_id = $1`, runID).Scan(&one, &zero)
	if one != 28 || zero != 12 {
		t.Fatalf("item scores: %d right, %d wrong", one, zero)
	}
	// Again with exact match: "It is 0." ≠ "0", so every item scores 0.
	if err := svc.ScoreRun(ctx, runID, "exact"); err != nil {
		t.Fatal(err)
	}
	read()
	if scorer != "exact" || q != 0 {
		t.Fatalf("rescored: %s %v", scorer, q)
	}
	if err := svc.ScoreRun(ctx, runID, "meteor"); err == nil {
		t.Fatal("an unknown scorer was accepted")
	}
}
