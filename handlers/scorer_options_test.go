package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/handlers"
	"github.com/ruckus/ruckus/jobs"
)

// scorerItems are references every new scorer can judge: one line of JSON
// each (a JSON Schema can require "city"), several words (BLEU has
// n-grams to count), the whole line ((.+) captures it).
var scorerItems = []string{"Paris", "Rome", "Madrid", "Lisbon", "Vienna", "Prague", "Warsaw", "Dublin", "Oslo", "Athens",
	"Berlin", "Bern", "Brussels", "Helsinki", "Riga", "Sofia", "Tallinn", "Vilnius", "Zagreb", "Valletta"}

func scorerDataset() string {
	var b strings.Builder
	for i, city := range scorerItems {
		ref, _ := json.Marshal(fmt.Sprintf(`{"city": "%s", "note": "the capital city of this country in Europe"}`, city))
		fmt.Fprintf(&b, "{\"custom_id\":\"c%02d\",\"prompt\":\"Which capital is number %d?\",\"reference\":%s}\n", i, i, ref)
	}
	return b.String()
}

// playSimRun does what agentd does with a sim run whose answers the
// server scripted (sim_answers), then what the score_run job does: the
// run is claimed, each item's answer becomes its output, and the run is
// scored with its benchmark's scorer and options.
func playSimRun(t *testing.T, e *env, runID int64, agentID int64) {
	t.Helper()
	ctx := context.Background()
	var jobID int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	claim, err := e.store.ClaimRun(ctx, runID, agentID, jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := e.store.Pool().Query(ctx, `SELECT i.idx, i.custom_id, coalesce(a.answer, '') FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
		JOIN dataset_items i ON i.dataset_id = b.dataset_id LEFT JOIN sim_answers a ON a.run_id = r.id AND a.idx = i.idx
		WHERE r.id = $1 ORDER BY i.idx`, runID)
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
	if len(rs) != len(scorerItems) {
		t.Fatalf("%d items to answer", len(rs))
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	if err := (&score.Service{Store: e.store}).ScoreRun(ctx, runID, ""); err != nil {
		t.Fatal(err)
	}
}

// expectedRight is how many items the sim answers right in run runID:
// the script the server follows (bench.SimRight, drawn per benchmark),
// independent of any scorer.
func expectedRight(t *testing.T, e *env, seed uint64, runID int64, model string, p float64) int {
	t.Helper()
	bid := benchmarkOfRun(t, e, runID)
	n := 0
	for i := range scorerItems {
		if bench.SimRight(seed, bid, model, i, p) {
			n++
		}
	}
	return n
}

func benchmarkOfRun(t *testing.T, e *env, runID int64) int64 {
	t.Helper()
	var bid int64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT benchmark_id FROM runs WHERE id = $1`, runID).Scan(&bid); err != nil {
		t.Fatal(err)
	}
	return bid
}

// Benchmarks with each new scorer, made through the form (regex,
// json-schema) and the API (bleu, with sim: in the manifest), on the sim
// runtime with scripted answers: the run page shows the quality the
// script implies, what the scorer ran with, the corpus BLEU, and why an
// item failed its schema; the form and re-scoring refuse bad options
// naming the field.
func TestNewScorersFromFormAndAPIShowOnTheRunPage(t *testing.T) {
	t.Parallel()
	const model, accuracy = "m/small", 0.6
	e := newEnv(t, func(d *handlers.Deps) {
		d.Benchmarks.(*bench.Service).SimAccuracy = map[string]float64{model: accuracy}
	})
	ctx := context.Background()
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(u)
	ds := fmt.Sprint(e.upload(tok, "capitals.jsonl", []byte(scorerDataset()), nil).body["dataset_id"])
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: model, Quantization: "bf16"})
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")

	// The form offers each scorer's options when it is picked.
	if f := c.get("/benchmarks/new/scorer?scorer=regex"); f.status != 200 || f.doc.Find(`input[name="scorer_pattern"]`).Length() != 1 ||
		f.doc.Find(`textarea[name="scorer_schema"]`).Length() != 0 {
		t.Fatalf("regex fields: %d %.300s", f.status, f.body)
	}
	if f := c.get("/benchmarks/new/scorer?scorer=json-schema"); f.status != 200 || f.doc.Find(`textarea[name="scorer_schema"]`).Length() != 1 {
		t.Fatalf("json-schema fields: %d", f.status)
	}
	if f := c.get("/benchmarks/new/scorer?scorer=bogus"); f.status != 422 || !strings.Contains(f.body, "must be one of") {
		t.Fatalf("unknown scorer: %d", f.status)
	}
	if sel, _ := c.get("/benchmarks/new").doc.Find(`#scorer-fields select[name="scorer"]`).Attr("hx-get"); sel != "/benchmarks/new/scorer" {
		t.Fatalf("the scorer picker does not redraw its fields: %q", sel)
	}

	form := func(name, scorer, field, value string) url.Values {
		v := url.Values{"name": {name}, "dataset_id": {ds}, "target_0_model": {model}, "target_0_runtime": {"sim"},
			"target_0_hardware": {"cpu-2c"}, "load_kind": {"sequential"}, "max_tokens": {"64"}, "scorer": {scorer}, "action": {"launch"}}
		if field != "" {
			v.Set(field, value)
		}
		return v
	}
	launch := func(v url.Values) int64 {
		t.Helper()
		res := c.post("/benchmarks/new", v)
		if res.status != 303 {
			t.Fatalf("launch %s: %d %s", v.Get("scorer"), res.status, res.text(`[data-testid="benchmark-errors"]`))
		}
		var runID int64
		if err := e.store.Pool().QueryRow(ctx, `SELECT r.id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE b.name = $1`, v.Get("name")).Scan(&runID); err != nil {
			t.Fatal(err)
		}
		return runID
	}
	// Bad options come back beside their field, nothing created.
	for _, tc := range []struct{ scorer, field, value, want string }{
		{"regex", "scorer_pattern", "(unclosed", "scorer_options.pattern: not a valid RE2 regular expression"},
		{"json-schema", "scorer_schema", `{"$ref": "https://example.com/schema.json"}`, "scorer_options.schema: not a valid JSON Schema"},
		{"json-schema", "scorer_schema", "", "scorer_options.schema: give a JSON Schema document"},
	} {
		before := e.countRows("benchmarks")
		res := c.post("/benchmarks/new", form("bad", tc.scorer, tc.field, tc.value))
		if res.status != 422 || !strings.Contains(res.text(`[data-testid="benchmark-errors"]`), tc.want) ||
			res.doc.Find(`[name="`+tc.field+`"][aria-invalid="true"]`).Length() != 1 || e.countRows("benchmarks") != before {
			t.Errorf("%s %q: %d %q", tc.scorer, tc.value, res.status, res.text(`[data-testid="benchmark-errors"]`))
		}
	}

	quality := func(runID int64) string {
		return c.get(fmt.Sprintf("/runs/%d", runID)).text(`[data-testid="run-quality"]`)
	}

	// regex through the form: (.+) captures the whole answer, which must
	// be the reference.
	regexRun := launch(form("regex", "regex", "scorer_pattern", `(.+)`))
	right := expectedRight(t, e, 0, regexRun, model, accuracy)
	if right == 0 || right == len(scorerItems) {
		t.Fatalf("the script answers %d of %d right: pick another accuracy", right, len(scorerItems))
	}
	playSimRun(t, e, regexRun, agent.ID)
	want := fmt.Sprintf("Quality (regex): %.3f", float64(right)/float64(len(scorerItems)))
	page := c.get(fmt.Sprintf("/runs/%d", regexRun))
	if q := page.text(`[data-testid="run-quality"]`); !strings.HasPrefix(q, want) || strings.Contains(q, "corpus BLEU") {
		t.Fatalf("regex run: %q, want %q", q, want)
	}
	if note := page.text(`[data-testid="run-scorer-options"]`); !strings.Contains(note, "Pattern: (.+)") {
		t.Fatalf("regex note: %q", note)
	}
	if why := c.get(fmt.Sprintf("/runs/%d/items/0", regexRun)).text(`[data-testid="item-score-why"]`); !strings.HasPrefix(why, `Score (regex): the pattern's first group captured "`) {
		t.Fatalf("regex item: %q", why)
	}
	// Score again from the page with another pattern: the job carries it.
	res := c.post(fmt.Sprintf("/runs/%d/score", regexRun), url.Values{"scorer": {"regex"}, "pattern": {`^\{"city"`}})
	if res.status != 303 {
		t.Fatalf("rescore: %d %s", res.status, res.body)
	}
	var args jobs.ScoreRunArgs
	var raw []byte
	if err := e.store.Pool().QueryRow(ctx, `SELECT args FROM river_job WHERE kind = 'score_run' ORDER BY id DESC LIMIT 1`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &args); err != nil || args.RunID != regexRun || args.Scorer != "regex" || !strings.Contains(string(args.Options), `^\\{\"city\"`) {
		t.Fatalf("score_run args %s", raw)
	}
	if _, err := (&score.Service{Store: e.store}).ScoreRunOptions(ctx, args.RunID, args.Scorer, args.Options); err != nil {
		t.Fatal(err)
	}
	// Every right answer starts {"city", and a wrong one keeps its first
	// word only when the perturbation left it (the answer is JSON broken
	// into words): at least the right ones match now.
	var matched int
	_ = e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM results WHERE run_id = $1 AND score = 1`, regexRun).Scan(&matched)
	if matched < right || !strings.Contains(c.get(fmt.Sprintf("/runs/%d", regexRun)).text(`[data-testid="run-scorer-options"]`), `Pattern: ^\{"city"`) {
		t.Fatalf("rescored with the new pattern: %d matched, %d right", matched, right)
	}
	// A bad pattern or schema comes back on the run's page, beside its
	// field, with what was typed kept.
	res = c.post(fmt.Sprintf("/runs/%d/score", regexRun), url.Values{"scorer": {"regex"}, "pattern": {"(?<=x)"}})
	if pattern, _ := res.doc.Find(`[data-testid="rescore-pattern"]`).Attr("value"); res.status != 422 || pattern != "(?<=x)" ||
		res.doc.Find(`[data-testid="rescore"] [data-testid="error-pattern"]`).Length() != 1 || res.text(`[data-testid="error-pattern"]`) == "" ||
		res.doc.Find(`[data-testid="rescore"] select[name="scorer"] option[value="regex"][selected]`).Length() != 1 ||
		res.text(`[data-testid="results-title"]`) == "" {
		t.Fatalf("a bad pattern on re-scoring: %d, pattern %q, message %q", res.status, pattern, res.text(`[data-testid="error-pattern"]`))
	}
	badSchema := `{"type": 7}`
	res = c.post(fmt.Sprintf("/runs/%d/score", regexRun), url.Values{"scorer": {"json-schema"}, "schema": {badSchema}})
	if res.status != 422 || res.text(`[data-testid="rescore-schema"]`) != badSchema ||
		res.doc.Find(`[data-testid="rescore"] [data-testid="error-schema"]`).Length() != 1 || res.text(`[data-testid="error-schema"]`) == "" {
		t.Fatalf("a bad schema on re-scoring: %d, schema %q, message %q", res.status, res.text(`[data-testid="rescore-schema"]`), res.text(`[data-testid="error-schema"]`))
	}
	res = c.post(fmt.Sprintf("/runs/%d/score", regexRun), url.Values{"scorer": {"json-schema"}})
	if res.status != 422 || res.text(`[data-testid="error-schema"]`) == "" {
		t.Fatalf("json-schema without a schema on re-scoring: %d", res.status)
	}
	res = c.post(fmt.Sprintf("/runs/%d/score", regexRun), url.Values{"scorer": {"meteor"}, "pattern": {"kept"}})
	if pattern, _ := res.doc.Find(`[data-testid="rescore-pattern"]`).Attr("value"); res.status != 422 ||
		res.text(`[data-testid="error-scorer"]`) != "Choose a scorer from the list." || pattern != "kept" {
		t.Fatalf("an unknown scorer on re-scoring: %d %q", res.status, res.text(`[data-testid="error-scorer"]`))
	}

	// json-schema through the form: right answers are the reference JSON,
	// wrong ones are cut in half (not JSON).
	schemaRun := launch(form("schema", "json-schema", "scorer_schema", `{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}`))
	playSimRun(t, e, schemaRun, agent.ID)
	if q := quality(schemaRun); !strings.HasPrefix(q, fmt.Sprintf("Quality (json-schema): %.3f", float64(expectedRight(t, e, 0, schemaRun, model, accuracy))/float64(len(scorerItems)))) {
		t.Fatalf("json-schema run: %q", q)
	}
	var failed int
	if err := e.store.Pool().QueryRow(ctx, `SELECT idx FROM results WHERE run_id = $1 AND score = 0 ORDER BY idx LIMIT 1`, schemaRun).Scan(&failed); err != nil {
		t.Fatal(err)
	}
	item := c.get(fmt.Sprintf("/runs/%d/items/%d", schemaRun, failed))
	if why := item.text(`[data-testid="item-score-why"]`); !strings.Contains(why, "Score (json-schema): not JSON") {
		t.Fatalf("item %d: %q (%d)", failed, why, item.status)
	}

	// bleu through the API, the accuracy in the manifest's sim settings.
	manifest := fmt.Sprintf(`{"name":"bleu","dataset":%s,"targets":[{"model":%q,"runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":64},"scorer":"bleu","sim":{"accuracy":{%q:0.5},"seed":7}}`, ds, model, model)
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	bleuRun := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	playSimRun(t, e, bleuRun, agent.ID)
	// Right answers are the reference (BLEU 1), wrong ones a perturbed
	// copy (below 1); the mean and the corpus score are sacreBLEU's over
	// what the run answered.
	type answered struct {
		out   string
		ref   json.RawMessage
		score float64
	}
	rows, err := e.store.Pool().Query(ctx, `SELECT r.output, i.reference, r.score FROM results r JOIN dataset_items i
		ON i.dataset_id = $2 AND i.idx = r.idx WHERE r.run_id = $1 ORDER BY r.idx`, bleuRun, ds)
	if err != nil {
		t.Fatal(err)
	}
	var items []answered
	for rows.Next() {
		var a answered
		if err := rows.Scan(&a.out, &a.ref, &a.score); err != nil {
			rows.Close()
			t.Fatal(err)
		}
		items = append(items, a)
	}
	rows.Close()
	var sum float64
	var stats []score.BLEUStats
	var ones int
	for i, a := range items {
		refs := score.References(a.ref)
		s, _ := score.SentenceBLEU(a.out, refs)
		st, _ := score.SegmentBLEU(a.out, refs)
		if scripted := bench.SimRight(7, benchmarkOfRun(t, e, bleuRun), model, i, 0.5); a.score != s || scripted != (a.score == 1) {
			t.Fatalf("item %d: score %v, sentence BLEU %v, scripted right %v", i, a.score, s, scripted)
		}
		if a.score == 1 {
			ones++
		}
		sum += s
		stats = append(stats, st)
	}
	if want := expectedRight(t, e, 7, bleuRun, model, 0.5); ones != want {
		t.Fatalf("%d items at BLEU 1, the script answers %d right", ones, want)
	}
	page = c.get(fmt.Sprintf("/runs/%d", bleuRun))
	wantQ := fmt.Sprintf("Quality (bleu): %.3f", sum/float64(len(scorerItems)))
	wantC := fmt.Sprintf("corpus BLEU %.3f", score.CorpusBLEU(stats))
	if q := page.text(`[data-testid="run-quality"]`); !strings.HasPrefix(q, wantQ) || !strings.Contains(q, wantC) {
		t.Fatalf("bleu run: %q, want %q and %q", q, wantQ, wantC)
	}
	if !strings.Contains(page.text(`[data-testid="run-scorer-options"]`), "divided by 100") {
		t.Fatal("the run page does not say BLEU's scale")
	}
	// The API and the summary CSV carry the corpus BLEU beside the mean.
	status, run := apiGet(e, fmt.Sprintf("/api/v1/runs/%d", bleuRun), tok)
	if status != 200 || run["scorer"] != "bleu" || run["corpus_bleu"] == nil || run["quality"] == nil {
		t.Fatalf("API run: %d %v", status, run)
	}
	if cb := run["corpus_bleu"].(float64); fmt.Sprintf("%.3f", cb) != fmt.Sprintf("%.3f", score.CorpusBLEU(stats)) {
		t.Fatalf("API corpus_bleu %v", cb)
	}
	_, _, csvBody := e.raw("/api/v1/benchmarks/"+fmt.Sprint(r.body["benchmark_id"])+"/summary?format=csv", tok)
	if !strings.Contains(csvBody, "corpus_bleu") || !strings.Contains(csvBody, fmt.Sprintf("%.6f", score.CorpusBLEU(stats))) {
		t.Fatalf("summary CSV: %.600s", csvBody)
	}
}
