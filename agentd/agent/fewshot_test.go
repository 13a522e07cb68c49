package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// arcFile writes n ARC questions in Hugging Face's shape.
func arcFile(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"q%d","question":"Which of these is example number %d?","choices":{"text":["one %d","two %d","three %d","four %d"],"label":["A","B","C","D"]},"answerKey":"%c"}`+"\n",
			i, i, i, i, i, i, 'A'+rune(i%4))
	}
	return b.String()
}

// A 0-shot and a 3-shot run of one model on one ARC dataset sit in one
// benchmark: the server writes the 3-shot run's prompts beside it, the
// agent sends them (every item's prompt is longer than the 0-shot run's),
// and the two runs' qualities and speeds are kept under different keys,
// so nothing compares them as like with like. Another agent's role reads
// none of the prompts, and no agent reads the items' prompt pieces.
func TestFewShotRunsSendTheirOwnPrompts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 1)
	const items = 24
	res := testkit.Dataset(ctx, t, w.st, &testkit.DatasetOpts{Owner: w.viewer.UserID, Content: arcFile(items), FileName: "arc.jsonl"})
	testkit.Model(ctx, t, w.st, &testkit.ModelOpts{Name: "acme/small-1b", ParamsB: 1, Quantization: "bf16"})
	startAgent(t, w.agentURL("node-f"), "node-f", "--sim-ttft", "const:1ms", "--sim-itl", "const:0ms")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	target := bench.Target{Model: "acme/small-1b", Runtime: "sim", Hardware: "cpu"}
	three := target
	three.FewShot = &bench.FewShot{K: 3}
	c, err := w.svc.Create(ctx, w.viewer, bench.Manifest{Name: "0 vs 3 shots", Dataset: bench.DatasetRef{ID: res.ID},
		Targets: []bench.Target{target, three}, Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4},
		Sampling: jobs.Sampling{MaxTokens: 64}, Sim: &bench.SimSettings{Accuracy: map[string]float64{"acme/small-1b": 0.5}, Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 2 || c.Runs[0].FewShotK != 0 || c.Runs[1].FewShotK != 3 || c.Runs[1].FewShotSeed != bench.DefaultFewShotSeed {
		t.Fatalf("planned %+v", c.Runs)
	}
	zero, shots := c.Runs[0].RunID, c.Runs[1].RunID
	var n0, n3 int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE run_id = $1), count(*) FILTER (WHERE run_id = $2) FROM run_prompts`, zero, shots).Scan(&n0, &n3); err != nil || n0 != 0 || n3 != items {
		t.Fatalf("run prompts: %d for the 0-shot run, %d for the 3-shot (%v), want 0 and %d", n0, n3, err, items)
	}
	// What the agent will send is the 3-shot prompt: three solved
	// examples, then the item's question.
	pending, err := w.st.PendingItems(ctx, shots, res.ID, items)
	if err != nil || len(pending) != items || strings.Count(string(pending[5].Request), `Answer: `) != 3 || !strings.Contains(string(pending[5].Request), "example number 5?") {
		t.Fatalf("pending items of the 3-shot run: %d %v; item 5: %s", len(pending), err, pending[5].Request)
	}
	testkit.WaitWithin(t, 60*time.Second, "both runs to finish", func() bool { return w.finished(c.BenchmarkID) })
	svc := &score.Service{Store: w.st}
	for _, id := range []int64{zero, shots} {
		if err := svc.ScoreRun(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
	}
	var longer int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM results a JOIN results b ON b.idx = a.idx AND b.run_id = $2
		WHERE a.run_id = $1 AND b.prompt_tokens > 2 * a.prompt_tokens AND a.status = 'ok' AND b.status = 'ok'`, zero, shots).Scan(&longer); err != nil || longer != items {
		t.Errorf("items whose 3-shot prompt the agent sent (more than twice the 0-shot's tokens): %d of %d (%v)", longer, items, err)
	}
	// The item page shows the prompt the run sent.
	if it, err := w.st.ResultByIdx(ctx, shots, 5); err != nil || strings.Count(string(it.Request), "Answer: ") != 3 {
		t.Errorf("the 3-shot run's item 5 shows the request %s (%v)", it.Request, err)
	}
	if it, err := w.st.ResultByIdx(ctx, zero, 5); err != nil || strings.Count(string(it.Request), "Answer: ") != 0 {
		t.Errorf("the 0-shot run's item 5 shows the request %s (%v)", it.Request, err)
	}
	keys := map[int64]string{}
	loads := map[int64]string{}
	for _, id := range []int64{zero, shots} {
		if err := conclude.ComputeRunStats(ctx, w.st, id); err != nil { // the score_run job's second step
			t.Fatal(err)
		}
		if err := conclude.PairRunQualities(ctx, w.st, id); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := pool.Query(ctx, `SELECT q.run_id, q.scorer_key, s.load_key FROM run_qualities q JOIN run_stats s USING (run_id) WHERE q.run_id IN ($1, $2)`, zero, shots)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var k, l string
		if err := rows.Scan(&id, &k, &l); err != nil {
			t.Fatal(err)
		}
		keys[id], loads[id] = k, l
	}
	rows.Close()
	if keys[zero] != "choice" || keys[shots] != "choice 3-shot seed=1234" || strings.Contains(loads[zero], "shot") || !strings.HasSuffix(loads[shots], "| 3-shot seed=1234") {
		t.Errorf("comparability keys: quality %q vs %q, load %q vs %q", keys[zero], keys[shots], loads[zero], loads[shots])
	}
	var pairs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM quality_pairs WHERE (run_a, run_b) IN (($1, $2), ($2, $1))`, zero, shots).Scan(&pairs); err != nil || pairs != 0 {
		t.Errorf("a 0-shot and a 3-shot run were paired for quality: %d (%v)", pairs, err)
	}
	// Another agent sees none of the prompts and never the pieces they
	// were built from (an example's answer is a reference).
	other := connectAs(t, w.agentURL("node-z"), "")
	var seen int
	if err := other.Pool().QueryRow(ctx, `SELECT count(*) FROM run_prompts`).Scan(&seen); err != nil || seen != 0 {
		t.Errorf("run prompts visible to an agent holding no run: %d (%v)", seen, err)
	}
	for _, q := range []string{`SELECT shot FROM dataset_items LIMIT 1`,
		fmt.Sprintf(`INSERT INTO run_prompts (run_id, idx, request) VALUES (%d, 99, '{}')`, shots),
		fmt.Sprintf(`UPDATE run_prompts SET request = '{}' WHERE run_id = %d`, shots)} {
		if _, err := other.Pool().Exec(ctx, q); !refused(err) {
			t.Errorf("%s as an agent: %v, want permission denied", q, err)
		}
	}
}
