package bench_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// playSim works a sim run as agentd does: claims it, answers each item
// with the answer the server wrote for it (sim_answers; filler where there
// is none), and finishes it.
func playSim(t *testing.T, st *store.Store, runID, agentID int64) {
	t.Helper()
	ctx := context.Background()
	var jobID int64
	if err := st.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	claim, err := st.ClaimRun(ctx, runID, agentID, jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.Pool().Query(ctx, `SELECT i.idx, i.custom_id, coalesce(a.answer, 'filler') FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
		JOIN dataset_items i ON i.dataset_id = b.dataset_id LEFT JOIN sim_answers a ON a.run_id = r.id AND a.idx = i.idx
		WHERE r.id = $1 AND i.idx < r.total ORDER BY i.idx`, runID)
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for rows.Next() {
		var res jobs.Result
		if err := rows.Scan(&res.Idx, &res.CustomID, &res.Output); err != nil {
			rows.Close()
			t.Fatal(err)
		}
		res.Status, res.CompletionTokens, res.ContentEvents, res.E2E = jobs.StatusOK, 8, 8, 20*time.Millisecond
		rs = append(rs, store.ResultRecord{Result: res, SentAt: time.Now()})
	}
	rows.Close()
	if _, err := st.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed"}); err != nil {
		t.Fatal(err)
	}
}

// firstLines is the first n lines of a JSONL file.
func firstLines(t *testing.T, path string, n int) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

// The simulated judge agrees with the scorer: a run on the simulated
// runtime at accuracy 0.6, scored by its scorer, then judged on the
// simulated runtime with the correctness rubric, gets the top of the
// scale on exactly the items the scorer counts right and the bottom on
// the others — on 200 GSM8K items scored by numeric, and on the starter
// summaries scored by ROUGE-L (whose wrong answers score 0, so ROUGE-L is
// the share right). A pairwise judging of two such runs wins exactly the
// items only the first got right and loses those only the second did.
func TestSimulatedJudgeAgreesWithTheScorer(t *testing.T) {
	t.Parallel()
	summaries, err := starter.Open(starter.All[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, scorer, content string
		items                 int
	}{
		{"gsm8k", "numeric", firstLines(t, "../../../shared/datasets/gsm8k/test.jsonl", 200), 200},
		{"summaries", "rougeL", string(summaries), 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			agreeOn(t, tc.scorer, tc.content, tc.items)
		})
	}
}

func agreeOn(t *testing.T, scorer, content string, items int) {
	ctx := context.Background()
	st := testkit.Store(t)
	u := testkit.User(ctx, t, st, nil)
	v := store.Viewer{UserID: u.ID}
	ds := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: u.ID, Content: content})
	if ds.ItemCount != items {
		t.Fatalf("%d items, want %d", ds.ItemCount, items)
	}
	for _, m := range []string{"acme/a-1b", "acme/b-1b", "acme/judge-8b"} {
		testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: m, Quantization: "bf16"})
	}
	agent := testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: "cpu-1"})
	p := testkit.Service(ctx, t, st, nil)
	c, err := p.Create(ctx, v, bench.Manifest{Name: "judged", Dataset: bench.DatasetRef{ID: ds.ID}, Scorer: scorer,
		Targets: []bench.Target{{Model: "acme/a-1b", Runtime: "sim", Hardware: "cpu"}, {Model: "acme/b-1b", Runtime: "sim", Hardware: "cpu"}},
		Load:    jobs.LoadProfile{Profile: jobs.LoadSequential}, Sampling: jobs.Sampling{MaxTokens: 512},
		Sim: &bench.SimSettings{Accuracy: map[string]float64{"acme/a-1b": 0.6, "acme/b-1b": 0.6}, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	scorers := &score.Service{Store: st, Judge: p}
	right := map[int64]map[int]bool{}
	for _, r := range c.Runs {
		playSim(t, st, r.RunID, agent.ID)
		if err := scorers.ScoreRun(ctx, r.RunID, ""); err != nil {
			t.Fatal(err)
		}
		right[r.RunID] = scoredRight(t, st, r.RunID, items)
	}
	a, b := c.Runs[0].RunID, c.Runs[1].RunID
	judgeOpts := bench.JudgeOptions{Model: "acme/judge-8b", Runtime: "sim", Hardware: "cpu", Rubric: "correctness"}
	single, err := p.StartJudge(ctx, v, bench.JudgeRequest{Options: judgeOpts, RunA: a})
	if err != nil {
		t.Fatal(err)
	}
	playSim(t, st, single.JudgeRunID, agent.ID)
	if err := scorers.ScoreRun(ctx, single.JudgeRunID, ""); err != nil {
		t.Fatal(err)
	}
	agree, top := 0, 0
	for idx, score := range judgeScores(t, st, single.JudgeRunID, items) {
		if (score == 1) == right[a][idx] && (score == 0) == !right[a][idx] {
			agree++
		}
		if score == 1 {
			top++
		}
	}
	t.Logf("%s: the simulated judge agrees with %s on %d of %d items (%d right by the scorer, %d at the top of the scale)",
		scorer, scorer, agree, items, count(right[a]), top)
	if agree != items {
		t.Errorf("the simulated judge agrees with %s on %d of %d items", scorer, agree, items)
	}
	// A pair: A wins where only A is right, loses where only B is.
	judgeOpts.Rubric = "pairwise"
	pair, err := p.StartJudge(ctx, v, bench.JudgeRequest{Options: judgeOpts, RunA: a, RunB: b})
	if err != nil {
		t.Fatal(err)
	}
	playSim(t, st, pair.JudgeRunID, agent.ID)
	if err := scorers.ScoreRun(ctx, pair.JudgeRunID, ""); err != nil {
		t.Fatal(err)
	}
	var wins, losses, ties int
	if err := st.Pool().QueryRow(ctx, `SELECT wins, losses, ties FROM judge_runs WHERE run_id = $1`, pair.JudgeRunID).Scan(&wins, &losses, &ties); err != nil {
		t.Fatal(err)
	}
	onlyA, onlyB := 0, 0
	for i := range items {
		switch {
		case right[a][i] && !right[b][i]:
			onlyA++
		case right[b][i] && !right[a][i]:
			onlyB++
		}
	}
	if wins != onlyA || losses != onlyB || ties != items-onlyA-onlyB {
		t.Errorf("pairwise: %d wins, %d losses, %d ties; want %d, %d, %d", wins, losses, ties, onlyA, onlyB, items-onlyA-onlyB)
	}
}

// scoredRight is which items of a run its scorer counts right (score 1).
func scoredRight(t *testing.T, st *store.Store, runID int64, items int) map[int]bool {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT idx, score FROM results WHERE run_id = $1`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]bool{}
	n := 0
	for rows.Next() {
		var idx int
		var s *float64
		if err := rows.Scan(&idx, &s); err != nil {
			t.Fatal(err)
		}
		if s == nil || (*s != 0 && *s != 1) {
			t.Fatalf("run %d item %d scores %v: want 0 or 1 (a wrong answer shares no word with the reference)", runID, idx, s)
		}
		out[idx] = *s == 1
		n++
	}
	if n != items {
		t.Fatalf("run %d: %d scored items, want %d", runID, n, items)
	}
	return out
}

// judgeScores is a single judging's normalised score per judged item.
func judgeScores(t *testing.T, st *store.Store, judgeRunID int64, items int) map[int]float64 {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT idx, score FROM judgments WHERE judge_run_id = $1 AND ord = 'single'`, judgeRunID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]float64{}
	for rows.Next() {
		var idx int
		var s *float64
		if err := rows.Scan(&idx, &s); err != nil {
			t.Fatal(err)
		}
		if s == nil {
			t.Fatalf("judge run %d: item %d has no score", judgeRunID, idx)
		}
		out[idx] = *s
	}
	if len(out) != items {
		t.Fatalf("judge run %d: %d judged items, want %d", judgeRunID, len(out), items)
	}
	return out
}

func count(m map[int]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}
