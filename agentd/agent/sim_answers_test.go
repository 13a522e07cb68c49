package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

func TestWithSimAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body, answer string
		ok           bool
		want         string
	}{
		{`{"model":"m"}`, "#### 4", true, `{"model":"m","` + sim.AnswerField + `":"#### 4"}`},
		{`{"model":"m"}`, "", false, `{"model":"m"}`},
		{`{}`, "a \"quoted\"\nline", true, `{"` + sim.AnswerField + `":"a \"quoted\"\nline"}`},
		{``, "x", true, ``},
	} {
		got := string(withSimAnswer([]byte(tc.body), tc.answer, tc.ok))
		if got != tc.want {
			t.Errorf("%s + %q: %s, want %s", tc.body, tc.answer, got, tc.want)
		}
		if tc.ok && tc.body != "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(got), &m); err != nil || m[sim.AnswerField] != tc.answer {
				t.Errorf("%s: not JSON carrying the answer: %v", got, err)
			}
		}
	}
}

// gsm8k uploads the first n items of the GSM8K test split (question and
// worked answer ending "#### N") and returns the dataset's id.
func gsm8k(t *testing.T, st *store.Store, v store.Viewer, n int) int64 {
	t.Helper()
	f, err := os.Open("../../../shared/datasets/gsm8k/test.jsonl")
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
	res := testkit.Dataset(context.Background(), t, st, &testkit.DatasetOpts{Owner: v.UserID, Content: b.String(), FileName: "gsm8k.jsonl"})
	if res.ItemCount != n {
		t.Fatalf("%d items, want %d", res.ItemCount, n)
	}
	return res.ID
}

// A sim benchmark on GSM8K with accuracy 0.55 and 0.8 for two models: the
// server writes each item's answer, the agent (under its own role)
// streams them, and the scorer finds qualities whose intervals hold
// those accuracies, apart from each other.
func TestSimRunsShowTheirModelsAccuracy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 1)
	const items = 300
	ds := gsm8k(t, w.st, w.viewer, items)
	for _, m := range []string{"acme/small-1b", "acme/large-8b"} {
		testkit.Model(ctx, t, w.st, &testkit.ModelOpts{Name: m, ParamsB: 1, Quantization: "bf16"})
	}
	startAgent(t, w.agentURL("node-q"), "node-q", "--sim-ttft", "const:1ms", "--sim-itl", "const:0ms")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	want := map[string]float64{"acme/small-1b": 0.55, "acme/large-8b": 0.8}
	c, err := w.svc.Create(ctx, w.viewer, bench.Manifest{Name: "quality", Dataset: bench.DatasetRef{ID: ds}, Scorer: "numeric",
		Targets: []bench.Target{{Model: "acme/small-1b", Runtime: "sim", Hardware: "cpu"}, {Model: "acme/large-8b", Runtime: "sim", Hardware: "cpu"}},
		Load:    jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 32}, Sampling: jobs.Sampling{MaxTokens: 512},
		Sim: &bench.SimSettings{Accuracy: want, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitWithin(t, 120*time.Second, "both runs to finish", func() bool { return w.finished(c.BenchmarkID) })
	svc := &score.Service{Store: w.st}
	b, _ := w.st.BenchmarkByID(ctx, w.viewer, c.BenchmarkID)
	for _, r := range b.Runs {
		if r.State != "completed" || r.Completed != items || r.Errors != 0 {
			t.Fatalf("run %s: %s, %d done, %d errors", r.ModelName, r.State, r.Completed, r.Errors)
		}
		if err := svc.ScoreRun(ctx, r.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	b, _ = w.st.BenchmarkByID(ctx, w.viewer, c.BenchmarkID)
	for _, r := range b.Runs {
		if r.Quality == nil || r.QualityLo == nil || r.QualityHi == nil {
			t.Fatalf("run %s not scored", r.ModelName)
		}
		t.Logf("%s: accuracy %.2f, quality %.3f [%.3f, %.3f] over %d items", r.ModelName, want[r.ModelName], *r.Quality, *r.QualityLo, *r.QualityHi, r.Scored)
		// Each item is an independent draw: the accuracy lies within a
		// binomial interval of the quality, and within its bootstrap
		// interval.
		p := want[r.ModelName]
		if math.Abs(*r.Quality-p) > 3.29*math.Sqrt(p*(1-p)/items) || !(*r.QualityLo <= p && p <= *r.QualityHi) {
			t.Errorf("run %s: quality %.3f [%.3f, %.3f], want about %.2f", r.ModelName, *r.Quality, *r.QualityLo, *r.QualityHi, want[r.ModelName])
		}
		// What the agent sent back is what the server decided, word for
		// word, and the scorer agrees with the decision item by item.
		var disagree, differ int
		err := w.st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE r.score <> CASE WHEN a.answer LIKE '%#### ' || (i.reference->>'final') THEN 1 ELSE 0 END),
			count(*) FILTER (WHERE r.output <> a.answer)
			FROM results r JOIN sim_answers a USING (run_id, idx) JOIN dataset_items i ON i.dataset_id = $2 AND i.idx = r.idx
			WHERE r.run_id = $1`, r.ID, ds).Scan(&disagree, &differ)
		if err != nil || disagree != 0 || differ != 0 {
			t.Errorf("run %s: %d scores disagree with the decided answers, %d outputs differ from them (%v)", r.ModelName, disagree, differ, err)
		}
		// The summary the agent wrote has the answers' lengths (the
		// capacity planner reads them there, not from the results).
		var p50, p90, longest, wantP50, wantP90, wantMax float64
		err = w.st.Pool().QueryRow(ctx, `SELECT (s.summary->'output_tokens_per_request'->>'p50')::float8, (s.summary->'output_tokens_per_request'->>'p90')::float8,
				(s.summary->'output_tokens_per_request'->>'max')::float8,
				percentile_cont(0.5) WITHIN GROUP (ORDER BY r.completion_tokens), percentile_cont(0.9) WITHIN GROUP (ORDER BY r.completion_tokens), max(r.completion_tokens)
			FROM runs s JOIN results r ON r.run_id = s.id WHERE s.id = $1 AND r.status = 'ok' GROUP BY s.summary`, r.ID).Scan(&p50, &p90, &longest, &wantP50, &wantP90, &wantMax)
		if err != nil || p50 != wantP50 || p90 != wantP90 || longest != wantMax || p50 < 2 {
			t.Errorf("run %s: output tokens per request p50 %v p90 %v max %v, want %v %v %v (%v)", r.ModelName, p50, p90, longest, wantP50, wantP90, wantMax, err)
		}
	}
	if q0, q1 := b.Runs[0], b.Runs[1]; *q0.QualityHi >= *q1.QualityLo && *q1.QualityHi >= *q0.QualityLo {
		t.Errorf("intervals overlap: %s [%.3f, %.3f], %s [%.3f, %.3f]", q0.ModelName, *q0.QualityLo, *q0.QualityHi, q1.ModelName, *q1.QualityLo, *q1.QualityHi)
	}
}

// An agent's role reads the simulated answers of the runs it holds, and
// neither another agent's, nor the references they came from, nor may it
// write any.
func TestAgentReadsOnlyTheSimAnswersOfItsRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 1)
	w.dataset = gsm8k(t, w.st, w.viewer, 10)
	w.svc.SimAccuracy = map[string]float64{"sim/tiny": 0.5}
	a, b := connectAs(t, w.agentURL("node-a"), "").Store, connectAs(t, w.agentURL("node-b"), "").Store
	register := func(st *store.Store, name, profile string) store.Agent {
		ag, err := st.RegisterAgent(ctx, store.AgentRegistration{Name: name, ProtocolVersion: jobs.ProtocolVersion,
			Runtimes: []string{"sim"}, Profile: store.HardwareProfile{Slug: profile, CPUCores: 2}})
		if err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
		return ag
	}
	agentA, agentB := register(a, "node-a", "cpu"), register(b, "node-b", "cpu-big")
	claim := func(st *store.Store, agent store.Agent, profile string) store.Run {
		run := w.run(w.launchOn(profile, jobs.LoadProfile{Profile: jobs.LoadSequential}))
		if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, *run.RiverJobID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ClaimRun(ctx, run.ID, agent.ID, *run.RiverJobID, "sim"); err != nil {
			t.Fatalf("%s claims its run: %v", agent.Name, err)
		}
		return run
	}
	runA, runB := claim(a, agentA, "cpu"), claim(b, agentB, "cpu-big")
	for _, c := range []struct {
		who  *store.Store
		name string
		run  store.Run
		want int
	}{{a, "node-a", runA, 10}, {b, "node-b", runB, 10}, {a, "node-a", runB, 0}, {b, "node-b", runA, 0}} {
		got, err := c.who.SimAnswers(ctx, c.run.ID)
		if err != nil || len(got) != c.want {
			t.Errorf("%s reads run %d's sim answers: %d %v, want %d", c.name, c.run.ID, len(got), err, c.want)
		}
	}
	var n int
	if err := a.Pool().QueryRow(ctx, `SELECT count(*) FROM sim_answers`).Scan(&n); err != nil || n != 10 {
		t.Errorf("sim answers visible to node-a: %d %v, want its run's 10", n, err)
	}
	for _, q := range []string{`SELECT reference FROM dataset_items LIMIT 1`,
		fmt.Sprintf(`INSERT INTO sim_answers (run_id, idx, answer) VALUES (%d, 99, 'forged')`, runA.ID),
		fmt.Sprintf(`UPDATE sim_answers SET answer = 'forged' WHERE run_id = %d`, runA.ID),
		fmt.Sprintf(`DELETE FROM sim_answers WHERE run_id = %d`, runA.ID)} {
		if _, err := a.Pool().Exec(ctx, q); !refused(err) {
			t.Errorf("%s as node-a: %v, want permission denied", q, err)
		}
	}
}
