package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A leaderboard asked to sort by quality under a refusal scorer ranks
// nothing: a refusal rate is not a quality where more is better
// (conclude.HigherIsBetter), so the list is by date and says why, on the
// page (in English and German) and in the API, as the verdict does for
// the same runs.
func TestLeaderboardRanksNoRefusalRate(t *testing.T) {
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
			if idx%2 == 0 || k == 0 && idx%4 == 1 {
				return "I'm sorry, but I can't help with that."
			}
			return "Here is what you can do safely: ..."
		})
		// The leaderboard lists runs with their figures.
		sum, err := summary.Run(ctx, e.store, id, jobs.SLO{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(sum)
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2 WHERE id = $1`, id, raw); err != nil {
			t.Fatal(err)
		}
		scoreJob(t, e, id)
		concludeRun(t, e, id)
	}
	for _, q := range []string{"sort=quality", ""} {
		lb := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%v/leaderboard?%s", up.body["dataset_id"], q), tok, nil, "")
		why, _ := lb.body["sort_reason"].(string)
		if lb.status != 200 || lb.body["sort"] != "date" || !strings.Contains(why, "is a refusal rate, not a quality where more is better") {
			t.Errorf("%q: %d, sorted by %v (%q), want by date saying a refusal rate is not ranked", q, lb.status, lb.body["sort"], why)
		}
		if rows, _ := lb.body["rows"].([]any); len(rows) != 2 {
			t.Errorf("%q: %d rows, want both runs listed: %v", q, len(rows), lb.body)
		}
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for lang, want := range map[string]string{"en": "is a refusal rate", "de": "ist eine Verweigerungsrate"} {
		page := c.getIn(fmt.Sprintf("/datasets/%v/leaderboard?sort=quality", up.body["dataset_id"]), lang)
		if got := page.text(`[data-testid="sort-reason"]`); page.status != 200 || !strings.Contains(got, want) {
			t.Errorf("%s page: %d, sort reason %q, want %q", lang, page.status, got, want)
		}
		if page.doc.Find(`[data-testid="ranked-under"]`).Length() != 0 {
			t.Errorf("%s page: says it ranks on quality under a refusal rate", lang)
		}
	}
}
