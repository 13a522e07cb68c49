package score_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// scoredRun makes a benchmark from m over items (one JSONL line each) and
// stores outputs as its run's results ("" outputs are failed requests).
func scoredRun(t *testing.T, m bench.Manifest, items []string, outputs []string) (*store.Store, int64) {
	t.Helper()
	ctx := context.Background()
	st := testkit.Store(t)
	u := testkit.User(ctx, t, st, nil)
	v := store.Viewer{UserID: u.ID}
	res := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: u.ID, Content: strings.Join(items, "\n") + "\n"})
	testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "m", ParamsB: 1, Quantization: "bf16"})
	a := testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: "a"})
	p := testkit.Service(ctx, t, st, nil)
	m.Name, m.Dataset = "s", bench.DatasetRef{ID: res.ID}
	m.Targets = []bench.Target{{Model: "m", Runtime: "sim", Hardware: "cpu"}}
	m.Load, m.Sampling = jobs.LoadProfile{Profile: jobs.LoadSequential}, jobs.Sampling{MaxTokens: 8}
	if errs := m.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	c, err := p.Create(ctx, v, m)
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
	for i, out := range outputs {
		r := jobs.Result{Idx: i, CustomID: fmt.Sprintf("q%d", i), Status: jobs.StatusOK, Output: out}
		if out == "" {
			r = jobs.Result{Idx: i, CustomID: r.CustomID, Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP5xx}
		}
		rs = append(rs, store.ResultRecord{Result: r, SentAt: time.Now()})
	}
	if _, err := st.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	return st, runID
}

type runQuality struct {
	scorer  string
	scored  int
	quality *float64
	corpus  *float64
	options json.RawMessage
	scores  []*float64
}

func readQuality(t *testing.T, st *store.Store, runID int64) runQuality {
	t.Helper()
	ctx := context.Background()
	var q runQuality
	if err := st.Pool().QueryRow(ctx, `SELECT scorer, scored, quality, corpus_bleu, scorer_options FROM runs WHERE id = $1`, runID).
		Scan(&q.scorer, &q.scored, &q.quality, &q.corpus, &q.options); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Pool().Query(ctx, `SELECT score FROM results WHERE run_id = $1 ORDER BY idx`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s *float64
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		q.scores = append(q.scores, s)
	}
	return q
}

func scoresOf(q runQuality) []string {
	out := make([]string, len(q.scores))
	for i, s := range q.scores {
		out[i] = "-"
		if s != nil {
			out[i] = fmt.Sprint(*s)
		}
	}
	return out
}

// The regex scorer reads its pattern from the benchmark's scorer_options,
// the run records it, and scoring again with another pattern (as the run
// page's form does) carries that one instead.
func TestScoreRunRegexWithThePattern(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	items := []string{`{"prompt":"a","reference":"42"}`, `{"prompt":"b","reference":"7"}`, `{"prompt":"c","reference":"x"}`, `{"prompt":"d"}`}
	outputs := []string{"so #### 42", "#### 8", "", "#### 1"}
	st, runID := scoredRun(t, bench.Manifest{Scorer: "regex", ScorerOptions: &bench.ScorerOptions{Pattern: `####\s*(\S+)`}}, items, outputs)
	svc := &score.Service{Store: st}
	if err := svc.ScoreRun(ctx, runID, ""); err != nil {
		t.Fatal(err)
	}
	q := readQuality(t, st, runID)
	// Right, wrong, failed (0), no reference (unscored: the pattern has a group).
	if got := strings.Join(scoresOf(q), " "); got != "1 0 0 -" || q.scored != 3 || *q.quality != 1.0/3 || q.corpus != nil {
		t.Fatalf("scores %s, %d scored, quality %v, corpus %v", got, q.scored, *q.quality, q.corpus)
	}
	if string(q.options) != `{"pattern": "####\\s*(\\S+)"}` {
		t.Fatalf("stored options %s", q.options)
	}
	// Again through the job's arguments with a pattern without a group: a
	// match scores 1, and the item without a reference is scored too.
	if _, err := svc.ScoreRunOptions(ctx, runID, "regex", json.RawMessage(`{"pattern":"#### [0-9]+$"}`)); err != nil {
		t.Fatal(err)
	}
	q = readQuality(t, st, runID)
	if got := strings.Join(scoresOf(q), " "); got != "1 1 0 1" || q.scored != 4 {
		t.Fatalf("rescored: %s, %d scored", got, q.scored)
	}
	// Another scorer without options takes none (exact: "so #### 42" ≠ "42").
	if err := svc.ScoreRun(ctx, runID, "exact"); err != nil {
		t.Fatal(err)
	}
	if q = readQuality(t, st, runID); q.options != nil || q.scorer != "exact" || strings.Join(scoresOf(q), " ") != "0 0 0 -" {
		t.Fatalf("exact: %s %s %v", q.scorer, q.options, scoresOf(q))
	}
}

// A benchmark whose manifest says regex without a pattern (as every
// benchmark did before regex took one) scores multiple-choice letters.
func TestScoreRunRegexWithoutPatternScoresChoice(t *testing.T) {
	t.Parallel()
	items := []string{`{"prompt":"a","reference":"C"}`, `{"prompt":"b","reference":"A"}`}
	st, runID := scoredRun(t, bench.Manifest{Scorer: "regex"}, items, []string{"The answer is (C).", "B) because"})
	if err := (&score.Service{Store: st}).ScoreRun(context.Background(), runID, ""); err != nil {
		t.Fatal(err)
	}
	if q := readQuality(t, st, runID); strings.Join(scoresOf(q), " ") != "1 0" || q.options != nil {
		t.Fatalf("scores %v options %s", scoresOf(q), q.options)
	}
}

func TestScoreRunJSONSchema(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}`
	items := []string{`{"prompt":"a"}`, `{"prompt":"b"}`, `{"prompt":"c"}`, `{"prompt":"d"}`}
	outputs := []string{`{"city":"Paris"}`, "```json\n{\"city\":\"Rome\"}\n```", `{"city":3}`, `not json`}
	st, runID := scoredRun(t, bench.Manifest{Scorer: "json-schema", ScorerOptions: &bench.ScorerOptions{Schema: bench.JSONDoc(schema)}}, items, outputs)
	if err := (&score.Service{Store: st}).ScoreRun(context.Background(), runID, ""); err != nil {
		t.Fatal(err)
	}
	q := readQuality(t, st, runID)
	if strings.Join(scoresOf(q), " ") != "1 1 0 0" || *q.quality != 0.5 {
		t.Fatalf("scores %v", scoresOf(q))
	}
	var stored struct{ Schema map[string]any }
	if json.Unmarshal(q.options, &stored) != nil || stored.Schema["type"] != "object" {
		t.Fatalf("stored options %s", q.options)
	}
}

// The bleu scorer stores each item's sentence BLEU and the run's corpus
// BLEU (a failed request an empty hypothesis); items whose references are
// all empty are left unscored, as sacreBLEU refuses them.
func TestScoreRunBLEU(t *testing.T) {
	t.Parallel()
	items := []string{`{"prompt":"a","reference":"The dog bit the man."}`,
		`{"prompt":"b","reference":["It was not unexpected.","No one was surprised."]}`,
		`{"prompt":"c","reference":["The man bit him first.","The man had bitten the dog."]}`,
		`{"prompt":"d","reference":""}`, `{"prompt":"e","reference":"never answered"}`}
	outputs := []string{"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him.", "anything", ""}
	st, runID := scoredRun(t, bench.Manifest{Scorer: "bleu"}, items, outputs)
	if err := (&score.Service{Store: st}).ScoreRun(context.Background(), runID, ""); err != nil {
		t.Fatal(err)
	}
	q := readQuality(t, st, runID)
	if q.scored != 4 || q.scores[3] != nil || q.scores[0] == nil || *q.scores[0] != 1 || *q.scores[4] != 0 {
		t.Fatalf("scores %v", scoresOf(q))
	}
	// sacreBLEU's README example, with the fifth item's reference
	// ("never answered", 2 tokens) and an empty hypothesis added: the
	// statistics of the first three plus 2 reference tokens.
	var stats []score.BLEUStats
	for i, refs := range [][]string{{"The dog bit the man."}, {"It was not unexpected.", "No one was surprised."},
		{"The man bit him first.", "The man had bitten the dog."}, {"never answered"}} {
		out := ""
		if i < 3 {
			out = outputs[i]
		}
		s, _ := score.SegmentBLEU(out, refs)
		stats = append(stats, s)
	}
	want := score.CorpusBLEU(stats)
	if q.corpus == nil || *q.corpus != want || want >= 0.48530827 || want <= 0 {
		t.Fatalf("corpus BLEU %v, want %v (below the README's 0.4853 for the longer references)", q.corpus, want)
	}
	// Without the fifth item it is sacreBLEU's README figure exactly.
	if got := score.CorpusBLEU(stats[:3]); math.Abs(got-0.48530827009929865) > 1e-12 {
		t.Fatalf("README corpus: %v", got)
	}
}
