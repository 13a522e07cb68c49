package jobs

import (
	"strings"
	"testing"
)

func TestLoadIdentity(t *testing.T) {
	c8 := []byte(`{"load":{"profile":"concurrency","concurrency":8},"sampling":{"max_tokens":256,"temperature":0}}`)
	c16 := []byte(`{"load":{"profile":"concurrency","concurrency":16},"sampling":{"max_tokens":256,"temperature":0}}`)
	a, b := NewLoadIdentity(c8, 3, 100, 200), NewLoadIdentity(c8, 3, 150, 400)
	if a.Key() != b.Key() || len(a.Differences(b)) != 0 {
		t.Errorf("same load, lengths within %g×: %q vs %q (%q)", LengthRatio, a.Key(), b.Key(), a.Differences(b))
	}
	// Answers a few tokens apart either side of a round number compare
	// (fixed classes split 63.83 from 64.00).
	if d := NewLoadIdentity(c8, 3, 100, 63.83).Differences(NewLoadIdentity(c8, 3, 100, 64)); len(d) != 0 {
		t.Errorf("63.83 vs 64 tokens: %q", d)
	}
	for _, tc := range []struct {
		other LoadIdentity
		want  string
	}{
		{NewLoadIdentity(c16, 3, 100, 200), "load concurrency (concurrency=8) vs concurrency (concurrency=16)"},
		{NewLoadIdentity(c8, 4, 100, 200), "dataset 3 vs 4"},
		{NewLoadIdentity(c8, 3, 100, 401), "mean output length 200.0 vs 401.0 tokens (more than 2× apart)"},
		{NewLoadIdentity(c8, 3, 250, 200), "mean input length 100.0 vs 250.0 tokens"},
		{NewLoadIdentity([]byte(`{"load":{"profile":"concurrency","concurrency":8},"sampling":{"max_tokens":64,"temperature":0}}`), 3, 100, 200),
			"sampling max_tokens=256 n=1 temperature=0 vs max_tokens=64 n=1 temperature=0"},
		{NewLoadIdentity([]byte(`{"imported":true}`), 3, 100, 200), "vs imported ()"},
		// How long a run measured is part of its load.
		{NewLoadIdentity([]byte(`{"load":{"profile":"concurrency","concurrency":8,"max_requests":30},"sampling":{"max_tokens":256,"temperature":0}}`), 3, 100, 200),
			"vs concurrency (concurrency=8, max_requests=30)"},
		{NewLoadIdentity([]byte(`{"load":{"profile":"concurrency","concurrency":8,"warmup":5,"max_duration":"30s"},"sampling":{"max_tokens":256,"temperature":0}}`), 3, 100, 200),
			"vs concurrency (concurrency=8, warmup=5, max_duration=30s)"},
	} {
		if !strings.Contains(strings.Join(a.Differences(tc.other), "; "), tc.want) {
			t.Errorf("differences %q, want %q", a.Differences(tc.other), tc.want)
		}
	}
	// Identities kept before measured lengths still compare by class.
	old := LoadIdentity{Profile: "sequential", Params: "()", InputClass: "<64", OutputClass: "64–255"}
	longer := old
	longer.OutputClass = "256–1023"
	if len(old.Differences(longer)) == 0 || old.Key() == longer.Key() {
		t.Error("old identities of different output classes compare")
	}
}

// TestLengthSweepLoadIdentity: a length sweep's lengths are part of its
// load, so two sweeps over other lengths are not compared as one load.
func TestLengthSweepLoadIdentity(t *testing.T) {
	a := NewLoadIdentity([]byte(`{"load":{"profile":"length-sweep","concurrency":4,"lengths":{"input":[128,512],"output":[64]}},"sampling":{"max_tokens":8}}`), 3, 300, 64)
	b := NewLoadIdentity([]byte(`{"load":{"profile":"length-sweep","concurrency":4,"lengths":{"input":[128,1024],"output":[64]}},"sampling":{"max_tokens":8}}`), 3, 300, 64)
	if a.Key() == b.Key() || !strings.Contains(strings.Join(a.Differences(b), "; "), "lengths=input[128 512] output[64]") {
		t.Errorf("sweeps over other lengths: %q vs %q (%q)", a.Key(), b.Key(), a.Differences(b))
	}
}
