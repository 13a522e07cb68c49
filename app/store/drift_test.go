package store_test

import (
	"context"
	"math"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// A deployment's runs (DeploymentRuns) pooled (conclude.DeploymentDrift,
// stats.PoolDrift) give the spread of ln output tokens/s and ln p95
// between the repeated runs of one target under one load, per deployment:
// runs of a target run once and other deployments' runs do not count.
func TestRunDriftPoolsRepeatedTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	drift := func(ctx context.Context, hw, rt string) (stats.Drift, error) {
		rs, err := st.DeploymentRuns(ctx, hw, rt, nil, nil)
		return conclude.DeploymentDrift(rs), err
	}
	testkit.Agent(ctx, t, st, nil) // registers the cpu profile
	model := testkit.Model(ctx, t, st, nil)
	other := testkit.Model(ctx, t, st, nil)
	kept := func(model int64, load string, tps, p95 float64) {
		t.Helper()
		id := testkit.Run(ctx, t, st, &testkit.RunOpts{Model: model})
		if _, err := st.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now() WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Pool().Exec(ctx, `INSERT INTO run_stats (run_id, attempt, load_key, load_identity, ok, batches, tps, e2e_p95)
			SELECT id, attempt, $2, '{}', 100, 10, $3, $4 FROM runs WHERE id = $1`, id, load, tps, p95); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := drift(ctx, "cpu", "sim"); err != nil || d.DF != 0 {
		t.Fatalf("no runs: %+v %v", d, err)
	}
	// Two targets repeated: 3 runs under load L1, 2 under L2; one run of
	// another model alone.
	for _, tps := range []float64{100, 110, 90} {
		kept(model, "L1", tps, 1000*100/tps)
	}
	kept(model, "L2", 50, 2000)
	kept(model, "L2", 55, 2200)
	kept(other, "L1", 999, 1)
	d, err := drift(ctx, "cpu", "sim")
	if err != nil {
		t.Fatal(err)
	}
	v := func(xs ...float64) float64 {
		m := 0.0
		for _, x := range xs {
			m += math.Log(x) / float64(len(xs))
		}
		s := 0.0
		for _, x := range xs {
			s += (math.Log(x) - m) * (math.Log(x) - m)
		}
		return s
	}
	wantTPS := (v(100, 110, 90) + v(50, 55)) / 3
	wantP95 := (v(1000, 1000*100/110.0, 1000*100/90.0) + v(2000, 2200)) / 3
	if d.DF != 3 || math.Abs(d.TPS-wantTPS) > 1e-9 || math.Abs(d.P95-wantP95) > 1e-9 {
		t.Errorf("drift %+v, want TPS %.6g P95 %.6g over 3 degrees of freedom", d, wantTPS, wantP95)
	}
	if d, _ := drift(ctx, "cpu", "vllm"); d.DF != 0 {
		t.Errorf("another deployment's drift: %+v", d)
	}
	// As of a run: the deployment's runs that ended after it do not count,
	// so a conclusion about it stays what it was (and a restored backup
	// draws it alike).
	var first, last int64
	if err := st.Pool().QueryRow(ctx, `SELECT min(id), max(id) FROM runs`).Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE runs SET finished_at = now() - make_interval(secs => 100 - id)`); err != nil {
		t.Fatal(err)
	}
	asOf := func(ids ...int64) int {
		rs, err := st.DeploymentRuns(ctx, "cpu", "sim", nil, ids)
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	if n, all := asOf(first), asOf(); n != 1 || all != 6 || asOf(first, first+2) != 3 || asOf(last) != 6 {
		t.Errorf("runs as of run %d: %d (as of %d and %d: %d; of %d: %d), of all %d", first, n, first, first+2, asOf(first, first+2), last, asOf(last), all)
	}
	_ = store.ErrNotFound
}
