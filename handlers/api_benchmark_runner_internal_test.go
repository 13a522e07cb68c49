package handlers

import (
	"math"
	"strings"
	"testing"
)

// FuzzBenchmarkResultCursor: whatever ?after= holds, the results
// document's cursor parser refuses it with a message naming the
// parameter, or returns a key within its columns' bounds (run id bigint
// from 1, item index integer from 0, sample 0 to 99) that reads back the
// same from the cursor the document writes.
func FuzzBenchmarkResultCursor(f *testing.F) {
	for _, s := range []string{"1-0-0", "41-17-3", "0-0-0", "1-2", "1-2-3-4", "9223372036854775807-2147483647-99", "9223372036854775808-0-0",
		"1-2147483648-0", "1-0-100", "-1-0-0", "1--0-0", "+1-0-0", "1-0x1-0", "1 -0-0", "", "---", "\x00-1-1", "١-1-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		k, err := parseBenchmarkResultCursor(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "after must be ") {
				t.Fatalf("%q: %q does not name the parameter", raw, err)
			}
			return
		}
		if k.RunID < 1 || k.Idx < 0 || k.Idx > math.MaxInt32 || k.Sample < 0 || k.Sample > 99 {
			t.Fatalf("%q: accepted %+v", raw, k)
		}
		if back, err := parseBenchmarkResultCursor(formatBenchmarkResultCursor(k)); err != nil || back != k {
			t.Fatalf("%q = %+v does not read back: %+v %v", raw, k, back, err)
		}
	})
}
