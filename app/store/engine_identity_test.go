package store_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// Engine settings are part of a target: a deployment's runs
// (DeploymentRuns) are those of one configuration, a run's previous runs
// (RegressionRuns) are rows of its model, every configuration, newest
// benchmark first, for the engine to tell targets apart
// (conclude.Regressions), and the leaderboard's
// cost is the engine's (conclude.CostPer1M: k/G of the profile's price
// under tensor parallelism k on G GPUs).
func TestEngineSettingsSeparateTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	testkit.Agent(ctx, t, st, &testkit.AgentOpts{Profile: store.HardwareProfile{Slug: "gpu-4x", GPUName: "L4", GPUCount: 4, GPUMemoryBytes: 24 << 30, CPUCores: 8}})
	price := 8.0
	if err := st.SetHardwarePrice(ctx, "gpu-4x", &price); err != nil {
		t.Fatal(err)
	}
	model := testkit.Model(ctx, t, st, nil)
	ds := testkit.Dataset(ctx, t, st, nil).ID
	kept := func(engine string, tps float64) int64 {
		t.Helper()
		b := testkit.Benchmark(ctx, t, st, &testkit.BenchmarkOpts{Dataset: ds})
		id := testkit.Run(ctx, t, st, &testkit.RunOpts{Benchmark: b, Model: model, HardwareProfile: "gpu-4x"})
		if _, err := st.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now(), engine = $2::jsonb,
			summary = jsonb_build_object('output_tokens_per_s', $3::float8) WHERE id = $1`, id, engine, tps); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Pool().Exec(ctx, `INSERT INTO run_stats (run_id, attempt, load_key, load_identity, ok, batches, tps, e2e_p95)
			SELECT id, attempt, 'L', '{}', 100, 10, $2, 1000 FROM runs WHERE id = $1`, id, tps); err != nil {
			t.Fatal(err)
		}
		return id
	}
	small1 := kept(`{"max_num_seqs":"2"}`, 100)
	small2 := kept(`{"max_num_seqs":"2"}`, 110)
	big := kept(`{"max_num_seqs":"16","tensor_parallel_size":"2"}`, 400)
	small3 := kept(`{"max_num_seqs":"2"}`, 90)

	for engine, want := range map[string]int{"max_num_seqs=2": 3, "max_num_seqs=16 tensor_parallel_size=2": 1, "": 0} {
		e := jobs.Engine{}
		if engine == "max_num_seqs=2" {
			e["max_num_seqs"] = "2"
		} else if engine != "" {
			e["max_num_seqs"], e["tensor_parallel_size"] = "16", "2"
		}
		rs, err := st.DeploymentRuns(ctx, "gpu-4x", "sim", e, nil)
		if err != nil || len(rs) != want {
			t.Errorf("deployment %q: %d runs (%v), want %d", engine, len(rs), err, want)
		}
	}
	prev, err := st.RegressionRuns(ctx, small3, 20)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, p := range prev {
		got = append(got, p.ID)
	}
	if want := []int64{small3, big, small2, small1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("regression rows of run %d: %v, want %v", small3, got, want)
	}
	// The leaderboard's cost: tensor parallelism 2 of 4 GPUs pays half of
	// $8 per hour over 400 tokens/s; the others the whole $8 per hour.
	rows, err := st.Leaderboard(ctx, store.Viewer{Admin: true}, store.LeaderboardQuery{DatasetID: ds, Sort: "cost", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := st.RunFiguresByID(ctx, store.Viewer{Admin: true}, []int64{big, small1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]float64{}
	for _, f := range figs {
		c, _, ok := conclude.CostPer1M(f, jobs.RunSummary{OutputTokensPerS: map[int64]float64{big: 400, small1: 100}[f.ID]})
		if !ok {
			t.Fatalf("run %d has no cost", f.ID)
		}
		want[f.ID] = c
	}
	if math.Abs(want[big]-4.0/(400*3600)*1e6) > 1e-9 {
		t.Errorf("conclude's cost of tp=2 on 4 GPUs: %g", want[big])
	}
	for _, r := range rows {
		if r.RunID == big && r.Engine != "max_num_seqs=16 tensor_parallel_size=2" {
			t.Errorf("leaderboard row's engine %q", r.Engine)
		}
		if w, ok := want[r.RunID]; ok && (r.CostPer1M == nil || math.Abs(*r.CostPer1M-w) > 1e-9) {
			t.Errorf("leaderboard cost of run %d: %v, want the engine's %g", r.RunID, r.CostPer1M, w)
		}
	}
}
