package jobs

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutToKeepsWholeCharacters(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		max     int
		head    string
		tail    string
		wasLong bool
	}{
		{"abc", 3, "abc", "abc", false},
		{"abcd", 3, "abc", "bcd", true},
		{"ééé", 5, "éé", "éé", true}, // 6 bytes: a whole é is dropped, not half of one
		{"ééé", 4, "éé", "éé", true},
		{"€x", 2, "", "x", true},
	} {
		head, cut := CutTo(c.in, c.max)
		tail, cutTail := CutToTail(c.in, c.max)
		if head != c.head || tail != c.tail || cut != c.wasLong || cutTail != c.wasLong {
			t.Errorf("%q to %d: %q %v, tail %q %v; want %q, tail %q, %v", c.in, c.max, head, cut, tail, cutTail, c.head, c.tail, c.wasLong)
		}
		if !utf8.ValidString(head) || !utf8.ValidString(tail) || len(head) > c.max || len(tail) > c.max {
			t.Errorf("%q to %d: %q / %q", c.in, c.max, head, tail)
		}
	}
}

func TestResultBoundCutsToTheDatabasesLimits(t *testing.T) {
	t.Parallel()
	r := Result{Output: strings.Repeat("é", MaxOutputBytes), Error: strings.Repeat("x", MaxResultErrorBytes+1), CustomID: "q1",
		ITLGapsMicros: make([]int32, MaxITLGaps+5), ITLTokens: make([]int32, MaxITLGaps+5)}
	cut := r.Bound()
	if strings.Join(cut, ",") != "output,error,itl_gaps_us" {
		t.Errorf("cut %v", cut)
	}
	if len(r.Output) != MaxOutputBytes || len(r.Error) != MaxResultErrorBytes || r.CustomID != "q1" ||
		len(r.ITLGapsMicros) != MaxITLGaps || len(r.ITLTokens) != MaxITLGaps {
		t.Errorf("after Bound: output %d, error %d, custom_id %q, gaps %d/%d", len(r.Output), len(r.Error), r.CustomID, len(r.ITLGapsMicros), len(r.ITLTokens))
	}
	if again := r.Bound(); len(again) != 0 {
		t.Errorf("a bounded result cut again: %v", again)
	}
}
