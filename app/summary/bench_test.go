package summary_test

import (
	"context"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// benchResults is how many results the benchmark's run has, each with
// benchGaps inter-token gaps.
const (
	benchResults = 4000
	benchGaps    = 64
)

// BenchmarkRunAggregate summarises one closed-loop run of 4,000 results
// and 256,000 inter-token latencies, as agentd does when a run ends and
// the server when it signs the run.
func BenchmarkRunAggregate(b *testing.B) {
	ctx := context.Background()
	st := testkit.Store(b)
	w := testkit.NewWorld(ctx, b, st, &testkit.WorldOpts{Dataset: testkit.DatasetOpts{Items: benchResults}, Run: testkit.RunOpts{JobID: 4343}})
	c, err := st.ClaimRun(ctx, w.Run, w.Agent.ID, 4343, "sim")
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rs := make([]store.ResultRecord, benchResults)
	for i := range rs {
		r := jobs.Result{Idx: i, CustomID: "item", Status: jobs.StatusOK, PromptTokens: 100 + i%50, CompletionTokens: benchGaps + 1,
			ContentEvents: benchGaps + 1, TTFT: time.Duration(80+i*37%400) * time.Millisecond, E2E: time.Duration(900+i*53%1500) * time.Millisecond,
			TPOT: time.Duration(12+i%9) * time.Millisecond}
		for g := range benchGaps {
			r.ITLGapsMicros = append(r.ITLGapsMicros, int32(9_000+(i*31+g*17)%6_000))
		}
		if i%97 == 5 {
			r.Status, r.ErrorClass, r.Error = jobs.StatusError, jobs.ErrHTTP5xx, "failed"
		}
		rs[i] = store.ResultRecord{Result: r, SentAt: t0.Add(time.Duration(i) * 50 * time.Millisecond)}
	}
	if _, err := st.WriteResults(ctx, c.Lease, rs); err != nil {
		b.Fatal(err)
	}
	slo := jobs.SLO{TTFT: jobs.Duration(300 * time.Millisecond)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := summary.Run(ctx, st, w.Run, slo, 200*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}
