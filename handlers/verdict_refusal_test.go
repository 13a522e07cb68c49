package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// A benchmark scored by refusal has a refusal rate, not a quality where
// more is better: its page's quality line says so in the words the API's
// verdict gives (not "no item has a reference to score against"), in
// English and in German from the catalogue.
func TestRefusalBenchmarkVerdictSaysWhatTheAPISays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	safety, err := starter.Open(starter.All[3])
	if err != nil {
		t.Fatal(err)
	}
	up := e.upload(tok, "safety.jsonl", safety, nil)
	for _, m := range []string{"m/careful", "m/eager"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: m, Quantization: "bf16"})
	}
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"safety","dataset":%v,"targets":[{"model":"m/careful","runtime":"sim","hardware":"cpu-2c"},
		{"model":"m/eager","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":16},"scorer":"refusal"}`, up.body["dataset_id"])
	res := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	for k, rr := range res.body["runs"].([]any) {
		id := int64(rr.(map[string]any)["run_id"].(float64))
		finishAsAgent(t, e, id, func(idx int, _ string) string {
			if idx%2 == 0 || k == 0 && idx%4 == 1 { // the careful model also refuses some benign requests
				return "I'm sorry, but I can't help with that."
			}
			return "Here is what you can do safely: ..."
		})
		scoreJob(t, e, id)
		concludeRun(t, e, id)
	}
	bid := fmt.Sprint(res.body["benchmark_id"])
	api := e.api(http.MethodGet, "/api/v1/benchmarks/"+bid+"/verdict", tok, nil, "")
	var reasons []string
	for _, nc := range api.body["not_comparable"].([]any) {
		if x := nc.(map[string]any); x["metric"] == "quality" {
			reasons = append(reasons, x["reason"].(string))
		}
	}
	en := i18n.Default().Lang("en").T("compare.said.not_ranked_refusal", "Scorer", "refusal")
	if len(reasons) != 2 || reasons[0] != en || reasons[1] != en {
		t.Fatalf("the API's quality reasons %q, want twice %q", reasons, en)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for lang, want := range map[string]string{"en": en, "de": i18n.Default().Lang("de").T("compare.said.not_ranked_refusal", "Scorer", "refusal")} {
		page := c.getIn("/benchmarks/"+bid, lang)
		got := strings.Join(strings.Fields(page.text(`[data-testid="verdict-quality"] [data-testid="verdict-missing"]`)), " ")
		if got != want || strings.Contains(page.text(`[data-testid="verdict-quality"]`), "reference") || strings.Contains(page.text(`[data-testid="verdict-quality"]`), "Referenz") {
			t.Errorf("%s: the verdict's quality line says %q, want %q", lang, got, want)
		}
		// The start page's one-line verdict says the same.
		home := strings.Join(strings.Fields(c.getIn("/", lang).text(`[data-testid="recent-`+bid+`"] [data-testid="recent-verdict"]`)), " ")
		if !strings.Contains(home, want) {
			t.Errorf("%s: the start page's verdict %q lacks %q", lang, home, want)
		}
	}
	if !strings.HasPrefix(en, "not ranked: refusal is a refusal rate") || !strings.HasPrefix(i18n.Default().Lang("de").T("compare.said.not_ranked_refusal", "Scorer", "refusal"), "nicht gereiht: refusal ist eine Verweigerungsrate") {
		t.Errorf("catalogue sentences: %q", en)
	}
}
