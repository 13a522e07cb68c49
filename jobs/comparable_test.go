package jobs

import (
	"strings"
	"testing"
)

func TestLoadIdentity(t *testing.T) {
	c8 := []byte(`{"load":{"profile":"concurrency","concurrency":8},"sampling":{"max_tokens":256,"temperature":0}}`)
	c16 := []byte(`{"load":{"profile":"concurrency","concurrency":16},"sampling":{"max_tokens":256,"temperature":0}}`)
	a, b := NewLoadIdentity(c8, 3, 100, 200), NewLoadIdentity(c8, 3, 120, 250)
	if a.Key() != b.Key() || len(a.Differences(b)) != 0 {
		t.Errorf("same load, lengths in one class: %q vs %q", a.Key(), b.Key())
	}
	for _, tc := range []struct {
		other LoadIdentity
		want  string
	}{
		{NewLoadIdentity(c16, 3, 100, 200), "load concurrency (concurrency=8) vs concurrency (concurrency=16)"},
		{NewLoadIdentity(c8, 4, 100, 200), "dataset 3 vs 4"},
		{NewLoadIdentity(c8, 3, 100, 300), "output length 64–255 vs 256–1023 tokens"},
		{NewLoadIdentity([]byte(`{"load":{"profile":"concurrency","concurrency":8},"sampling":{"max_tokens":64,"temperature":0}}`), 3, 100, 200),
			"sampling max_tokens=256 n=1 temperature=0 vs max_tokens=64 n=1 temperature=0"},
		{NewLoadIdentity([]byte(`{"imported":true}`), 3, 100, 200), "vs imported ()"},
	} {
		if a.Key() == tc.other.Key() || !strings.Contains(strings.Join(a.Differences(tc.other), "; "), tc.want) {
			t.Errorf("differences %q, want %q", a.Differences(tc.other), tc.want)
		}
	}
	for mean, class := range map[float64]string{0: "<64", 63.9: "<64", 64: "64–255", 1023: "256–1023", 4096: "≥4096"} {
		if got := lengthClass(mean); got != class {
			t.Errorf("lengthClass(%g) = %q, want %q", mean, got, class)
		}
	}
}
