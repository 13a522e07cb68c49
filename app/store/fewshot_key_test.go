package store

import "testing"

// A run's few-shot part of its keys names drawn examples by k and seed and
// a fixed set by its name; BaseScorerKey takes either off.
func TestFewShotKeyNamesTheExemplars(t *testing.T) {
	for _, c := range []struct {
		k         int
		seed      int64
		exemplars string
		want      string
	}{{0, 0, "", ""}, {5, 1234, "", " 5-shot seed=1234"}, {8, 0, "gsm8k-cot", " 8-shot gsm8k-cot"}} {
		got := FewShotKey(c.k, c.seed, c.exemplars)
		if got != c.want {
			t.Errorf("FewShotKey(%d, %d, %q) = %q, want %q", c.k, c.seed, c.exemplars, got, c.want)
		}
		if base := BaseScorerKey("numeric" + got); base != "numeric" {
			t.Errorf("BaseScorerKey(%q) = %q", "numeric"+got, base)
		}
	}
}
