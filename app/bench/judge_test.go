package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

func TestJudgeOptionsValidate(t *testing.T) {
	t.Parallel()
	ok := JudgeOptions{Model: "acme/judge-8b", Runtime: "vllm", Hardware: "h100-80gb-x1"}
	with := func(f func(*JudgeOptions)) JudgeOptions {
		o := ok
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name string
		o    JudgeOptions
		mode string
		path string // "" when valid
	}{
		{"plain", ok, judge.Single, ""},
		{"rubric", with(func(o *JudgeOptions) { o.Rubric = "faithfulness" }), judge.Single, ""},
		{"custom", with(func(o *JudgeOptions) { o.Rubric, o.Template = "custom", "{{question}} {{answer}}" }), judge.Single, ""},
		{"template alone", with(func(o *JudgeOptions) { o.Template = "{{answer_a}} vs {{answer_b}}" }), judge.Pairwise, ""},
		{"scale 0-100", with(func(o *JudgeOptions) { o.Scale = &JudgeScale{Min: 0, Max: 100} }), judge.Single, ""},
		{"no model", with(func(o *JudgeOptions) { o.Model = "" }), judge.Single, "j.model"},
		{"bad model", with(func(o *JudgeOptions) { o.Model = "--rm -rf" }), judge.Single, "j.model"},
		{"bad runtime", with(func(o *JudgeOptions) { o.Runtime = "magic" }), judge.Single, "j.runtime"},
		{"no hardware", with(func(o *JudgeOptions) { o.Hardware = "" }), judge.Single, "j.hardware"},
		{"hardware NUL", with(func(o *JudgeOptions) { o.Hardware = "a\x00b" }), judge.Single, "j.hardware"},
		{"unknown rubric", with(func(o *JudgeOptions) { o.Rubric = "vibes" }), judge.Single, "j.rubric"},
		{"pairwise rubric for single", with(func(o *JudgeOptions) { o.Rubric = "pairwise" }), judge.Single, "j.rubric"},
		{"single rubric for pair", with(func(o *JudgeOptions) { o.Rubric = "correctness" }), judge.Pairwise, "j.rubric"},
		{"rubric and template", with(func(o *JudgeOptions) { o.Rubric, o.Template = "helpfulness", "{{answer}}" }), judge.Single, "j.rubric"},
		{"custom without template", with(func(o *JudgeOptions) { o.Rubric = "custom" }), judge.Single, "j.template"},
		{"unknown placeholder", with(func(o *JudgeOptions) { o.Template = "{{answer}} {{source}}" }), judge.Single, "j.template"},
		{"scale reversed", with(func(o *JudgeOptions) { o.Scale = &JudgeScale{Min: 10, Max: 1} }), judge.Single, "j.scale"},
		{"scale too wide", with(func(o *JudgeOptions) { o.Scale = &JudgeScale{Min: -1, Max: 10} }), judge.Single, "j.scale"},
		{"scale on a pair", with(func(o *JudgeOptions) { o.Scale = &JudgeScale{Min: 1, Max: 10} }), judge.Pairwise, "j.scale"},
		{"max tokens", with(func(o *JudgeOptions) { o.MaxTokens = 100000 }), judge.Single, "j.max_tokens"},
		{"concurrency", with(func(o *JudgeOptions) { o.Concurrency = -1 }), judge.Single, "j.concurrency"},
	} {
		errs := tc.o.Validate("j", tc.mode)
		switch {
		case tc.path == "" && len(errs) > 0:
			t.Errorf("%s: %v; want valid", tc.name, errs)
		case tc.path != "" && (len(errs) != 1 || errs[0].Path != tc.path || errs[0].Message == ""):
			t.Errorf("%s: %v; want one error at %s", tc.name, errs, tc.path)
		}
	}
	if lo, hi := ok.Bounds(); lo != 1 || hi != 10 {
		t.Errorf("default scale %d..%d", lo, hi)
	}
	if got := ok.RubricName(judge.Single, false); got != "helpfulness" {
		t.Errorf("default rubric without references: %s", got)
	}
	if got := ok.RubricName(judge.Pairwise, true); got != "pairwise-correctness" {
		t.Errorf("default pairwise rubric with references: %s", got)
	}
}

// The judge's prompts: one per answered item when grading one run (a
// failed request is not sent), two per item for a pair, the first run's
// answer shown first in one order and second in the other, each prompt's
// reference naming the judged item and order.
func TestJudgePrompts(t *testing.T) {
	t.Parallel()
	req := func(q string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"url": "/v1/chat/completions", "body": map[string]any{"messages": []map[string]string{{"role": "user", "content": q}}}})
		return b
	}
	srcs := []store.JudgeSource{
		{Idx: 0, Request: req("Capital of France?"), Reference: json.RawMessage(`"Paris"`), StatusA: jobs.StatusOK, OutputA: "Paris", StatusB: jobs.StatusOK, OutputB: "Lyon"},
		{Idx: 3, Request: req("2+2?"), Reference: json.RawMessage(`"4"`), StatusA: jobs.StatusError, StatusB: jobs.StatusOK, OutputB: "4"},
	}
	r, _ := judge.RubricByName("correctness")
	right := true
	items, answers, sent := judgePrompts(judge.Single, srcs, []simTruth{{a: &right}, {}}, "sys", r.Template, 1, 10)
	if sent != 1 || len(items) != 1 || len(answers) != 1 || items[0].CustomID != "0/single" || string(items[0].Reference) != `{"idx":0,"ord":"single"}` {
		t.Fatalf("single: sent %d, items %+v, answers %+v", sent, items, answers)
	}
	user := userMessage(t, items[0].Request)
	for _, want := range []string{"Capital of France?", "[Reference answer: begin]\nParis\n", "[Answer to grade: begin]\nParis\n"} {
		if !strings.Contains(user, want) {
			t.Errorf("single prompt lacks %q:\n%s", want, user)
		}
	}
	if p := judge.ParseRating(answers[0].Answer, 1, 10); !p.OK || p.Rating != 10 {
		t.Errorf("simulated verdict on a right answer: %q", answers[0].Answer)
	}

	pr, _ := judge.RubricByName("pairwise")
	items, answers, sent = judgePrompts(judge.Pairwise, srcs, nil, "sys", pr.Template, 1, 10)
	if sent != 2 || len(items) != 4 || answers != nil {
		t.Fatalf("pairwise: sent %d, %d items, answers %v", sent, len(items), answers)
	}
	ab, ba := userMessage(t, items[0].Request), userMessage(t, items[1].Request)
	if items[0].CustomID != "0/ab" || items[1].CustomID != "0/ba" ||
		strings.Index(ab, "Paris") > strings.Index(ab, "Lyon") || strings.Index(ba, "Lyon") > strings.Index(ba, "Paris") {
		t.Errorf("orders:\n%s\n---\n%s", ab, ba)
	}
	// The first run failed item 3: its side shows that it has no answer.
	if got := userMessage(t, items[2].Request); !strings.Contains(got, "(no answer: the request failed)") {
		t.Errorf("a failed side: %s", got)
	}
}

func userMessage(t *testing.T, req json.RawMessage) string {
	t.Helper()
	var r struct {
		Body struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		} `json:"body"`
	}
	if err := json.Unmarshal(req, &r); err != nil || len(r.Body.Messages) != 2 || r.Body.Messages[0].Role != "system" {
		t.Fatalf("judge request %s (%v)", req, err)
	}
	return r.Body.Messages[1].Content
}
