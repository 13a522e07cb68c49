package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

func TestItemMaxTokensIsKept(t *testing.T) {
	t.Parallel()
	bench := jobs.Sampling{MaxTokens: 512}
	tests := []struct {
		name, item string
		want       int
	}{
		{"own max_tokens", `{"url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"x"}],"max_tokens":7}}`, 7},
		{"own max_completion_tokens", `{"url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"x"}],"max_completion_tokens":9}}`, 0},
		{"none: the benchmark's", `{"url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"x"}]}}`, 512},
		{"null: the benchmark's", `{"url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"x"}],"max_tokens":null}}`, 512},
	}
	for _, tc := range tests {
		req, err := openai.BuildRequest(json.RawMessage(tc.item), "m", itemSampling([]byte(tc.item), bench))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil || body.MaxTokens != tc.want {
			t.Errorf("%s: max_tokens %d, want %d (%s)", tc.name, body.MaxTokens, tc.want, req.Body)
		}
	}
}

func TestConversationHistoryCarriesAnswers(t *testing.T) {
	t.Parallel()
	spec := synth.Spec{Kind: synth.KindMultiTurn, Count: 2, Turns: synth.Fixed(3), Input: synth.Fixed(4), Output: synth.Fixed(2)}
	spec.Normalize()
	if _, errs := spec.Validate(); errs != nil {
		t.Fatal(errs)
	}
	var items []store.PendingItem
	for it := range spec.Items(nil) {
		items = append(items, store.PendingItem{Idx: len(items), CustomID: it.CustomID, Request: it.Request})
	}
	c := planItems(items)
	if len(c.prev) != 4 || c.prev[2] != 1 || c.prev[1] != 0 || c.prev[5] != 4 {
		t.Fatalf("prev %v", c.prev)
	}
	c.answered(0, jobs.Result{Status: jobs.StatusOK, Output: "first answer"})
	c.answered(1, jobs.Result{Status: jobs.StatusError, Output: "partial"})
	var got struct {
		Body struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		} `json:"body"`
	}
	if err := json.Unmarshal(c.request(2, items[2].Request), &got); err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range got.Body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user,user" || got.Body.Messages[1].Content != "first answer" {
		t.Fatalf("history %+v", got.Body.Messages)
	}
	if string(c.request(3, items[3].Request)) != string(items[3].Request) {
		t.Fatal("a first turn changed")
	}
}

// A multi-turn run resumed by another agent: the turns left carry the
// earlier segment's turns and answers in their history, read under the
// new agent's own restricted role.
func TestResumedConversationKeepsItsHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 1)
	spec := synth.Spec{Kind: synth.KindMultiTurn, Count: 2, Turns: synth.Fixed(3), Input: synth.Fixed(4), Output: synth.Fixed(2)}
	up, err := (&ingest.Uploader{Store: w.st}).Upload(ctx, ingest.Source{}, ingest.Request{Kind: ingest.Generated, Viewer: w.viewer, Name: "talks", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	w.dataset = up.Dataset.ID
	as := connectAs(t, w.agentURL("node-r"), "").Store
	agent := testkit.Agent(ctx, t, as, &testkit.AgentOpts{Name: "node-r"})
	run := w.run(w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2}))
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, *run.RiverJobID); err != nil {
		t.Fatal(err)
	}
	claim, err := as.ClaimRun(ctx, run.ID, agent.ID, *run.RiverJobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	// The earlier segment answered the first turn of the first talk.
	if _, err := as.WriteResults(ctx, claim.Lease, []store.ResultRecord{{Result: jobs.Result{Idx: 0, CustomID: "x", Status: jobs.StatusOK,
		Output: "the first answer"}, SentAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	claim.Completed = 1
	items, err := as.PendingItems(ctx, run.ID, claim.DatasetID, claim.Total)
	if err != nil || len(items) != 5 || items[0].Idx != 1 {
		t.Fatalf("pending items: %d %v", len(items), err)
	}
	wk := &runWorker{st: as}
	c, err := wk.planConversations(ctx, run.ID, claim, items)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Body struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		} `json:"body"`
	}
	if err := json.Unmarshal(c.request(1, items[0].Request), &got); err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range got.Body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user" || got.Body.Messages[1].Content != "the first answer" {
		t.Fatalf("the second turn's history after the resume: %+v", got.Body.Messages)
	}
	// The second turn is ready at once: its previous turn was answered
	// before the resume.
	if p, ok := c.prev[1]; !ok || p != 0 {
		t.Fatalf("prev of the second turn: %v %v", p, ok)
	}
}
