package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/jobs"
)

// TestLengthPromptsCalibrateOnTheRuntimesCount: on a runtime that reports
// usage (the simulated one, four characters a token) the two probes give
// one token a word and the head's and template's overhead, and a prompt
// made for any length is counted at exactly that length; each request's
// prompt starts with its own head (no shared cached prefix) and is the
// same when made again. Where the runtime answers no usage the prompts
// keep the approximation of one token a word plus four.
func TestLengthPromptsCalibrateOnTheRuntimesCount(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(sim.NewServer(sim.Config{TTFT: sim.Dist{Kind: sim.KindConst}, ITL: sim.Dist{Kind: sim.KindConst}}, nil))
	t.Cleanup(ts.Close)
	client, err := openai.New(ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	args := jobs.RunArgs{RunID: 7, Runtime: "sim", Load: jobs.LoadProfile{Profile: jobs.LoadLengthSweep,
		Lengths: &jobs.Lengths{Input: []int{5, 777, 4096}, Output: []int{3}}}}
	log := slog.New(slog.DiscardHandler)
	p := calibrateLengths(context.Background(), client, "m", args, log)
	if !p.measured || p.perWord != 1 || p.overhead != 3 {
		t.Fatalf("calibration %+v, want measured, 1 token a word, 3 of overhead", *p)
	}
	for _, step := range args.Load.Lengths.Steps() {
		item := p.request(42, step.Phase())
		req, err := openai.BuildRequest(item, "m", itemSampling(item, jobs.Sampling{MaxTokens: 64}))
		if err != nil {
			t.Fatal(err)
		}
		res := client.Do(context.Background(), req)
		if res.Status != jobs.StatusOK || res.PromptTokens != step.Input || res.CompletionTokens != step.Output {
			t.Errorf("%s: %d prompt and %d answer tokens (%s %s), want %d and %d", step.Phase(), res.PromptTokens, res.CompletionTokens,
				res.Status, res.Error, step.Input, step.Output)
		}
	}
	a, b := content(t, p.request(1, "input 777 output 3")), content(t, p.request(2, "input 777 output 3"))
	if a[:9] == b[:9] || a == b || content(t, p.request(1, "input 777 output 3")) != a {
		t.Errorf("prompts of requests 1 and 2 begin %q and %q", a[:12], b[:12])
	}
	if warm := content(t, p.request(1, "warmup")); len(warm) != len(content(t, p.request(1, "input 5 output 3"))) {
		t.Errorf("a warm-up prompt is not the first step's length: %q", warm)
	}

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusServiceUnavailable) }))
	t.Cleanup(down.Close)
	if client, err = openai.New(down.URL, ""); err != nil {
		t.Fatal(err)
	}
	p = calibrateLengths(context.Background(), client, "m", args, log)
	if p.measured || p.words(777) != 773 || p.words(2) != 1 {
		t.Errorf("without usage: %+v, %d words for 777 tokens", *p, p.words(777))
	}
}

// content is the user message of a generated item.
func content(t *testing.T, item []byte) string {
	t.Helper()
	var it struct {
		Body struct {
			Messages []struct{ Content string } `json:"messages"`
		} `json:"body"`
	}
	if err := json.Unmarshal(item, &it); err != nil || len(it.Body.Messages) != 1 {
		t.Fatalf("item %s: %v", item, err)
	}
	return it.Body.Messages[0].Content
}
