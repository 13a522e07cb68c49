package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// scriptedBenchmark runs one sim target per model over dataset ds, each
// answering item i with answers[k][i] (what the simulated runtime
// streams), and scores the runs with the scoring job's own code (the
// dataset's default scorer).
func scriptedBenchmark(t *testing.T, e *env, tok string, ds any, models []string, answers [][]string) (string, []int64) {
	t.Helper()
	ctx := context.Background()
	var targets []string
	for _, m := range models {
		if _, err := e.store.CreateModel(ctx, store.ModelFields{Name: m, ParamsB: 0.5, Quantization: "bf16", ContextLength: 4096}); err != nil &&
			!strings.Contains(err.Error(), "exists") {
			t.Fatal(err)
		}
		targets = append(targets, fmt.Sprintf(`{"model":%q,"runtime":"sim","hardware":"cpu-2c"}`, m))
	}
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"suite","dataset":%v,"targets":[%s],"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, ds, strings.Join(targets, ","))
	res := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	var ids []int64
	scorer := &score.Service{Store: e.store}
	for k, rr := range res.body["runs"].([]any) {
		id := int64(rr.(map[string]any)["run_id"].(float64))
		ids = append(ids, id)
		var job int64
		_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, id).Scan(&job)
		claim, err := e.store.ClaimRun(ctx, id, agent.ID, job, "sim")
		if err != nil {
			t.Fatal(err)
		}
		var rs []store.ResultRecord
		for i, out := range answers[k] {
			var cid string
			if err := e.store.Pool().QueryRow(ctx, `SELECT custom_id FROM dataset_items WHERE dataset_id = $1 AND idx = $2`, ds, i).Scan(&cid); err != nil {
				t.Fatal(err)
			}
			rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: cid, Status: jobs.StatusOK, Output: out,
				CompletionTokens: 4, ContentEvents: 4, TTFT: 10 * time.Millisecond, E2E: 50 * time.Millisecond}, SentAt: time.Now()})
		}
		if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
			t.Fatal(err)
		}
		sum, err := summary.Run(ctx, e.store, id, jobs.SLO{}, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(sum)
		if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: 10 * time.Second, Summary: raw,
			Throughput: sum.OutputTokensPerS}); err != nil {
			t.Fatal(err)
		}
		if err := scorer.ScoreRun(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprint(res.body["benchmark_id"]), ids
}

// An MMLU file is recognised as MMLU (not GSM8K), its prompts carry the
// k-shot examples asked for, and a run's page, API and CSV show the
// quality per subject.
func TestMMLUUploadShowsPerSubjectScores(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	file, err := os.ReadFile("../app/dataset/testdata/mmlu.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// More shots than a subject has items: refused, naming the subject.
	if r := e.upload(tok, "mmlu.jsonl", file, map[string]string{"shots": "3"}); r.status != 422 || !strings.Contains(fmt.Sprint(r.body["errors"]), `subject "abstract_algebra" has 3`) {
		t.Fatalf("3-shot upload of 3 items per subject: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodPost, "/api/v1/datasets?shots=26", tok, strings.NewReader(""), "multipart/form-data; boundary=x"); r.status != 422 ||
		!strings.Contains(fmt.Sprint(r.body["errors"]), "shots") {
		t.Fatalf("shots=26: %d %v", r.status, r.body)
	}
	up := e.upload(tok, "mmlu.jsonl", file, map[string]string{"shots": "2"})
	if up.status != 201 || up.body["format"] != "mmlu" || up.body["default_scorer"] != "choice" || up.body["task_kind"] != "multiple-choice" || up.body["shots"] != float64(2) {
		t.Fatalf("upload: %d %v", up.status, up.body)
	}
	ds := up.body["dataset_id"]
	items := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%v/items", ds), tok, nil, "")
	first := items.body["items"].([]any)[0].(map[string]any)
	content := first["request"].(map[string]any)["body"].(map[string]any)["messages"].([]any)[0].(map[string]any)["content"].(string)
	if first["category"] != "abstract_algebra" || !strings.HasPrefix(content, "The following are multiple choice questions (with answers) about abstract algebra.\n\nLet p = ") ||
		strings.Count(content, "Answer:") != 3 || !strings.HasSuffix(content, "D. 6\nAnswer:") {
		t.Fatalf("first item: %v\n%s", first, content)
	}

	// Model m/a answers every item right; m/b only the anatomy ones.
	right := []string{"B", "A", "C", "B", "D", "D"}
	a, b := make([]string, 6), make([]string, 6)
	for i, l := range right {
		a[i] = "Answer: " + l
		b[i] = "Answer: " + l
		if i%2 == 0 { // abstract_algebra
			b[i] = "Answer: A"
		}
	}
	bench, runs := scriptedBenchmark(t, e, tok, ds, []string{"m/a", "m/b"}, [][]string{a, b})
	_ = bench

	// What the page must show, read back from the stored scores.
	type fig struct {
		n    int
		mean float64
	}
	want := map[int64]map[string]fig{}
	for _, id := range runs {
		rows, err := e.store.Pool().Query(ctx, `SELECT di.category, count(*), avg(r.score) FROM results r JOIN dataset_items di ON di.dataset_id = $2 AND di.idx = r.idx
			WHERE r.run_id = $1 GROUP BY di.category`, id, ds)
		if err != nil {
			t.Fatal(err)
		}
		want[id] = map[string]fig{}
		for rows.Next() {
			var c string
			var f fig
			if err := rows.Scan(&c, &f.n, &f.mean); err != nil {
				t.Fatal(err)
			}
			want[id][c] = f
		}
		rows.Close()
	}
	if want[runs[1]]["abstract_algebra"].mean != 0 || want[runs[1]]["anatomy"].mean != 1 || want[runs[0]]["abstract_algebra"].mean != 1 {
		t.Fatalf("scored %v", want)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for _, id := range runs {
		page := c.get(fmt.Sprintf("/runs/%d", id))
		got := map[string]string{}
		page.doc.Find(`[data-testid="category-row"]`).Each(func(_ int, r *goquery.Selection) {
			var cells []string
			r.Find("td").Each(func(_ int, td *goquery.Selection) { cells = append(cells, strings.TrimSpace(td.Text())) })
			got[strings.TrimSpace(r.Find(`[data-testid="category-name"]`).Text())] = strings.Join(cells, " ")
		})
		if len(got) != 2 {
			t.Fatalf("run %d: category rows %v", id, got)
		}
		for cat, f := range want[id] {
			if !strings.HasPrefix(got[cat], fmt.Sprintf("%s %d %.3f", cat, f.n, f.mean)) {
				t.Errorf("run %d %s: row %q, want %d items mean %.3f", id, cat, got[cat], f.n, f.mean)
			}
		}
		// The API and the CSV say the same.
		api := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", id), tok, nil, "")
		cats, _ := api.body["categories"].([]any)
		if len(cats) != 2 || cats[1].(map[string]any)["category"] != "anatomy" || cats[1].(map[string]any)["mean"] != want[id]["anatomy"].mean ||
			cats[1].(map[string]any)["count"] != float64(3) {
			t.Errorf("run %d API categories %v", id, api.body["categories"])
		}
		csv := c.get(fmt.Sprintf("/runs/%d/results?format=categories", id))
		if csv.status != 200 || !strings.HasPrefix(csv.body, "run_id,category,count,mean,ci_low,ci_high\n") ||
			!strings.Contains(csv.body, fmt.Sprintf("%d,anatomy,3,%.4f,", id, want[id]["anatomy"].mean)) {
			t.Errorf("run %d categories CSV: %d %q", id, csv.status, csv.body)
		}
		if head := strings.SplitN(c.get(fmt.Sprintf("/runs/%d/results?format=csv", id)).body, "\n", 2)[0]; strings.Contains(head, "category") {
			t.Errorf("the results CSV changed its columns: %s", head)
		}
	}
}

// Two runs on the same items: the comparison and the verdict decide with
// a paired test (McNemar here), not by whether the intervals overlap.
func TestPairedSignificanceOnComparisonAndVerdict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	var f strings.Builder
	for i := range 40 {
		fmt.Fprintf(&f, `{"question":"Q%d?","subject":"%s","choices":["w","x","y","z"],"answer":%d}`+"\n", i, []string{"s1", "s2"}[i%2], i%4)
	}
	up := e.upload(tok, "mmlu40.jsonl", []byte(f.String()), nil)
	if up.status != 201 {
		t.Fatalf("upload: %v", up.body)
	}
	letter := func(i int, right bool) string {
		if right {
			return "Answer: " + string(rune('A'+i%4))
		}
		return "Answer: " + string(rune('A'+(i+1)%4))
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for _, tc := range []struct {
		name        string
		a, b        func(i int) bool
		significant bool
	}{
		// A right on 28 items, B on 20 of those: 8 discordant pairs, all
		// A's. The 95 % intervals (0.70 and 0.50 ± about 0.15) overlap;
		// McNemar's exact p = 2·0.5⁸ ≈ 0.008.
		{"nested", func(i int) bool { return i%10 < 7 }, func(i int) bool { return i%10 < 5 }, true},
		// 5 against 2 discordant pairs: p ≈ 0.45.
		{"close", func(i int) bool { return i%10 < 7 }, func(i int) bool {
			return i%10 < 7 && i != 0 && i != 1 && i != 2 && i != 3 && i != 4 || i == 7 || i == 8
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			aOut, bOut := make([]string, 40), make([]string, 40)
			nb, nc := 0, 0
			for i := range 40 {
				aOut[i], bOut[i] = letter(i, tc.a(i)), letter(i, tc.b(i))
				switch {
				case tc.a(i) && !tc.b(i):
					nb++
				case !tc.a(i) && tc.b(i):
					nc++
				}
			}
			_, p, _ := stats.McNemar(nb, nc)
			if (p < 0.05) != tc.significant {
				t.Fatalf("the script gives p = %g for b=%d c=%d", p, nb, nc)
			}
			bench, runs := scriptedBenchmark(t, e, tok, up.body["dataset_id"], []string{"m/a-" + tc.name, "m/b-" + tc.name}, [][]string{aOut, bOut})
			if tc.significant {
				// The intervals overlap: comparing them would have called it a tie.
				var aLo, aHi, bLo, bHi float64
				if err := e.store.Pool().QueryRow(context.Background(), `SELECT a.quality_lo, a.quality_hi, b.quality_lo, b.quality_hi FROM runs a, runs b
					WHERE a.id = $1 AND b.id = $2`, runs[0], runs[1]).Scan(&aLo, &aHi, &bLo, &bHi); err != nil {
					t.Fatal(err)
				}
				if aLo > bHi || bLo > aHi {
					t.Fatalf("intervals [%g, %g] and [%g, %g] do not overlap: the case tests nothing", aLo, aHi, bLo, bHi)
				}
			}
			page := c.get(fmt.Sprintf("/compare?runs=%d,%d", runs[0], runs[1]))
			head := page.doc.Find(fmt.Sprintf(`[data-testid="compare-run-%d"]`, runs[1]))
			diff := strings.Join(strings.Fields(head.Find(`[data-testid="paired-diff"]`).Text()), " ")
			wantP := fmt.Sprintf("p = %.3g (McNemar, exact, 40 items)", p)
			if page.status != 200 || !strings.Contains(diff, wantP) || !strings.HasPrefix(diff, fmt.Sprintf("Δ %+.3f", float64(nc-nb)/40)) {
				t.Fatalf("paired note %q, want %q", diff, wantP)
			}
			if got := head.Find(`[data-testid="significant"]`).Length() == 1; got != tc.significant || head.Find(`[data-testid="not-significant"]`).Length() == 1 == tc.significant {
				t.Errorf("significant shown %v, want %v", got, tc.significant)
			}
			// The verdict's quality line decides the same way, by the paired test.
			v := c.get("/benchmarks/" + bench)
			q := v.doc.Find(`[data-testid="verdict-quality"]`)
			sig := strings.TrimSpace(q.Find(`[data-testid="verdict-significance"]`).Text())
			basis := strings.Join(strings.Fields(q.Find(`[data-testid="verdict-basis"]`).Text()), " ")
			if (sig == "significant") != tc.significant || !strings.Contains(basis, "paired comparison on 40 items (McNemar, exact)") ||
				!strings.Contains(basis, fmt.Sprintf("p = %.3g", p)) {
				t.Errorf("verdict %q, basis %q", sig, basis)
			}
		})
	}
}

// The knowledge and code-summary suites are uploaded in their published
// shapes, recognised with their default scorer, and a run's answers are
// scored as each suite's own evaluation scores them.
func TestMoreSuitesUploadAndScore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	for _, c := range []struct {
		file, format, scorer string
		answers              []string
		want                 []float64
	}{
		{"winogrande.jsonl", "winogrande", "choice", []string{"Answer: B", "The answer is A", "(A)"}, []float64{1, 0, 1}},
		{"openbookqa.jsonl", "openbookqa", "choice", []string{"B", "C. sunlight", "D"}, []float64{1, 1, 0}},
		// The official TriviaQA normalisation: "The River-Danube!" is the
		// alias "river danube"; "AU" normalises to "au".
		{"triviaqa.jsonl", "triviaqa", "triviaqa-em", []string{" The River-Danube!", "AU"}, []float64{1, 1}},
		{"nq_open.jsonl", "nq-open", "triviaqa-em", []string{" 4", "Michelangelo Buonarroti", "one hundred"}, []float64{1, 0, 0}},
		{"codexglue_python.jsonl", "codexglue-code-to-text", "codexglue-bleu", []string{"Return the names of the files in path.", "Counts words."}, nil},
	} {
		file, err := os.ReadFile("../app/dataset/testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		up := e.upload(tok, c.file, file, nil)
		if up.status != 201 || up.body["format"] != c.format || up.body["default_scorer"] != c.scorer {
			t.Fatalf("%s: %d %v", c.file, up.status, up.body)
		}
		ds := up.body["dataset_id"]
		_, runs := scriptedBenchmark(t, e, tok, ds, []string{"m/" + strings.TrimSuffix(c.file, ".jsonl")}, [][]string{c.answers})
		rows, err := e.store.Pool().Query(ctx, `SELECT score FROM results WHERE run_id = $1 ORDER BY idx`, runs[0])
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for rows.Next() {
			var s float64
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		rows.Close()
		if c.want == nil {
			// BLEU: the docstring itself scores 1, a loose paraphrase
			// between 0 and 1, as the evaluator's smoothing gives it.
			f, _ := score.ByName("codexglue-bleu")
			c.want = []float64{1, f("Counts words.", []string{"Count the words of a string ."})}
			if !(c.want[1] > 0 && c.want[1] < 0.5) {
				t.Fatalf("paraphrase BLEU %v", c.want[1])
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: scores %v, want %v", c.file, got, c.want)
		}
	}
}
