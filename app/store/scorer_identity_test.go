package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// A scorer identity is the scorer's name and its options as canonical
// JSON: the same options written differently give the same key, other
// options another one, and no options, null or {} none; a judge's key
// names its model, mode, rubric, scale and template.
func TestScorerIdentity(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("Rate {{answer}}"))
	digest := hex.EncodeToString(sum[:])
	judge := &store.JudgeIdentity{Model: "org/judge", Mode: "single", Rubric: "correctness", Template: "Rate {{answer}}", ScaleMin: 1, ScaleMax: 10}
	for _, tc := range []struct {
		scorer, options string
		judge           *store.JudgeIdentity
		want            string
	}{
		{"", `{"pattern":"x"}`, nil, ""},
		{"rougeL", "", nil, "rougeL"},
		{"rougeL", "null", nil, "rougeL"},
		{"rougeL", " {} ", nil, "rougeL"},
		{"regex", `{"pattern":"#### (\\d+)"}`, nil, `regex{"pattern":"#### (\\d+)"}`},
		{"regex", "{ \"pattern\" : \"<a&b>\",\n \"flags\": \"i\" }", nil, `regex{"flags":"i","pattern":"<a&b>"}`},
		{"json", `{"schema":{"type":"object","required":["a"]},"strict":true,"n":1.50}`, nil, `json{"n":1.50,"schema":{"required":["a"],"type":"object"},"strict":true}`},
		{"judge", "", judge, `judge{"mode":"single","model":"org/judge","rubric":"correctness","scale":"1-10","template":"sha256:` + digest[:12] + `"}`},
	} {
		if got := store.ScorerIdentity(tc.scorer, json.RawMessage(tc.options), tc.judge); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.scorer, tc.options, got, tc.want)
		}
	}
	other := *judge
	other.Template = "Rate {{answer}} strictly"
	a, b := store.ScorerIdentity("judge", nil, judge), store.ScorerIdentity("judge", nil, &other)
	if a == b || a != store.ScorerIdentity("judge", nil, judge) {
		t.Errorf("a judge's template must tell identities apart, and only it: %s, %s", a, b)
	}
	other = *judge
	other.Model = "org/other"
	if store.ScorerIdentity("judge", nil, &other) == a {
		t.Errorf("a judge model must tell identities apart")
	}
}
