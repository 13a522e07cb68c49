package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A 5-shot run on an uploaded GSM8K split goes end to end on sim: the
// agent sends every item's lm-eval gsm8k prompt (five worked answers, the
// item's question, the stops), the item page shows it, and the run is
// scored by its numeric final answers under a 5-shot key.
func TestGSM8KFewShotRunEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 1)
	const items = 16
	var file strings.Builder
	for i := range items {
		fmt.Fprintf(&file, `{"question":"Tom has %d apples and buys 2. How many now?","answer":"%d + 2 = %d\n#### %d"}`+"\n", i, i, i+2, i+2)
	}
	res := testkit.Dataset(ctx, t, w.st, &testkit.DatasetOpts{Owner: w.viewer.UserID, Content: file.String(), FileName: "gsm8k.jsonl"})
	testkit.Model(ctx, t, w.st, &testkit.ModelOpts{Name: "acme/small-1b", ParamsB: 1, Quantization: "bf16"})
	startAgent(t, w.agentURL("node-g"), "node-g", "--sim-ttft", "const:1ms", "--sim-itl", "const:0ms")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	c, err := w.svc.Create(ctx, w.viewer, bench.Manifest{Name: "gsm8k 5-shot", Dataset: bench.DatasetRef{ID: res.ID},
		Targets:  []bench.Target{{Model: "acme/small-1b", Runtime: "sim", Hardware: "cpu"}},
		FewShot:  &bench.FewShot{K: 5},
		Load:     jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4},
		Sampling: jobs.Sampling{MaxTokens: 64}, Sim: &bench.SimSettings{Accuracy: map[string]float64{"acme/small-1b": 0.5}, Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	run := c.Runs[0].RunID
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { return w.finished(c.BenchmarkID) })
	if err := (&score.Service{Store: w.st}).ScoreRun(ctx, run, ""); err != nil {
		t.Fatal(err)
	}
	it, err := w.st.ResultByIdx(ctx, run, 7)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Body struct {
			Messages []struct{ Content string } `json:"messages"`
			Stop     []string                   `json:"stop"`
		} `json:"body"`
	}
	if err := json.Unmarshal(it.Request, &sent); err != nil || len(sent.Body.Messages) != 1 {
		t.Fatalf("item 7 sent %s (%v)", it.Request, err)
	}
	if p := sent.Body.Messages[0].Content; strings.Count(p, "Question: ") != 6 || strings.Count(p, "\n#### ") != 5 ||
		!strings.HasSuffix(p, "\n\nQuestion: Tom has 7 apples and buys 2. How many now?\nAnswer:") || fmt.Sprint(sent.Body.Stop) != "[Question: </s> <|im_end|>]" {
		t.Fatalf("item 7 sent %q, stop %q", p, sent.Body.Stop)
	}
	var ok int
	var key string
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE r.status = 'ok'), max(q.scorer_key) FROM results r LEFT JOIN run_qualities q USING (run_id) WHERE r.run_id = $1`, run).Scan(&ok, &key); err != nil ||
		ok != items || key != "numeric 5-shot seed=1234" {
		t.Errorf("answered %d of %d, quality key %q (%v)", ok, items, key, err)
	}
}
