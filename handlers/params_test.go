package handlers

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParseIDAndIdx(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw       string
		id        int64 // 0: refused
		idx       int   // -1: refused
		finiteOK  bool
		finiteVal float64
	}{
		{"1", 1, 1, true, 1},
		{"0", 0, 0, true, 0},
		{"007", 7, 7, true, 7},
		{"2147483647", 2147483647, 2147483647, true, 2147483647},
		{"2147483648", 2147483648, -1, true, 2147483648},
		{"9223372036854775807", math.MaxInt64, -1, true, 9223372036854775807},
		{"9223372036854775808", 0, -1, true, 9223372036854775808},
		{"99999999999999999999", 0, -1, true, 99999999999999999999},
		{"-1", 0, -1, true, -1},
		{"+1", 0, -1, true, 1},
		{" 1", 0, -1, true, 1},
		{"1.0", 0, -1, true, 1},
		{"0x1F", 0, -1, false, 0},
		{"1e3", 0, -1, true, 1000},
		{"", 0, -1, false, 0},
		{"NaN", 0, -1, false, 0},
		{"inf", 0, -1, false, 0},
		{"-Infinity", 0, -1, false, 0},
		{"1e999", 0, -1, false, 0},
		{"1_000", 0, -1, true, 1000},
	} {
		id, err := parseID("id", tc.raw)
		if (tc.id == 0) != (err != nil) || (err == nil && id != tc.id) {
			t.Errorf("parseID(%q) = %d, %v; want %d", tc.raw, id, err, tc.id)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "id must be a whole number from 1 to 9223372036854775807") {
			t.Errorf("parseID(%q): message %q does not name the parameter and its bounds", tc.raw, err)
		}
		idx, err := parseIdx("after", tc.raw)
		if (tc.idx == -1) != (err != nil) || (err == nil && idx != tc.idx) {
			t.Errorf("parseIdx(%q) = %d, %v; want %d", tc.raw, idx, err, tc.idx)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "after must be a whole number from 0 to 2147483647") {
			t.Errorf("parseIdx(%q): message %q does not name the parameter and its bounds", tc.raw, err)
		}
		v, err := parseFinite("w", tc.raw)
		if tc.finiteOK != (err == nil) || (err == nil && v != tc.finiteVal) {
			t.Errorf("parseFinite(%q) = %v, %v; want %v (ok %v)", tc.raw, v, err, tc.finiteVal, tc.finiteOK)
		}
	}
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{"0:0", true}, {"12.5:7", true}, {"+Inf:3", true}, {"-Inf:2147483647", true},
		{"0:2147483648", false}, {"0:-1", false}, {"NaN:1", false}, {"1", false}, {":1", false}, {"1:", false}, {"1:2:3", false},
	} {
		if _, err := parseResultCursor(tc.raw); (err == nil) != tc.ok {
			t.Errorf("parseResultCursor(%q): %v, want ok %v", tc.raw, err, tc.ok)
		}
	}
}

// FuzzParseIDsAndCursors: whatever a path or query holds, the parsers
// either refuse it with a message naming the parameter or return a value
// within its column's bounds (bigint ids ≥ 1, integer indices ≥ 0, finite
// numbers, cursors with an integer index and a key that is a number), and
// a value they return is read back the same from its canonical form.
func FuzzParseIDsAndCursors(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "2147483647", "2147483648", "9223372036854775807", "9223372036854775808",
		"99999999999999999999", "+5", "0x1F", "1e3", "NaN", "Inf", "-Inf", "1e999", " 7", "7 ", "", "0:0", "+Inf:3",
		"NaN:1", "0:2147483648", "1.5:-1", "\x00", "\xff", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if id, err := parseID("id", raw); err != nil {
			if !strings.HasPrefix(err.Error(), "id must be ") {
				t.Fatalf("parseID(%q): %q does not name the parameter", raw, err)
			}
		} else if id < 1 {
			t.Fatalf("parseID(%q) = %d", raw, id)
		} else if back, err := parseID("id", strconv.FormatInt(id, 10)); err != nil || back != id {
			t.Fatalf("parseID(%q) = %d does not read back: %d, %v", raw, id, back, err)
		}
		if idx, err := parseIdx("after", raw); err != nil {
			if !strings.HasPrefix(err.Error(), "after must be ") {
				t.Fatalf("parseIdx(%q): %q does not name the parameter", raw, err)
			}
		} else if idx < 0 || idx > math.MaxInt32 {
			t.Fatalf("parseIdx(%q) = %d", raw, idx)
		} else if back, err := parseIdx("after", strconv.Itoa(idx)); err != nil || back != idx {
			t.Fatalf("parseIdx(%q) = %d does not read back: %d, %v", raw, idx, back, err)
		}
		if v, err := parseFinite("w", raw); err != nil {
			if !strings.HasPrefix(err.Error(), "w must be ") {
				t.Fatalf("parseFinite(%q): %q does not name the parameter", raw, err)
			}
		} else if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("parseFinite(%q) = %v", raw, v)
		}
		if cur, err := parseResultCursor(raw); err != nil {
			if !strings.HasPrefix(err.Error(), "after must be ") {
				t.Fatalf("parseResultCursor(%q): %q does not name the parameter", raw, err)
			}
		} else if math.IsNaN(cur.Key) || cur.Idx < 0 || cur.Idx > math.MaxInt32 {
			t.Fatalf("parseResultCursor(%q) = %+v", raw, cur)
		} else if back, err := parseResultCursor(strconv.FormatFloat(cur.Key, 'g', -1, 64) + ":" + strconv.Itoa(cur.Idx)); err != nil || back != cur {
			t.Fatalf("parseResultCursor(%q) = %+v does not read back from the page link: %+v, %v", raw, cur, back, err)
		}
		if err := checkQueryText("q", raw); err == nil && (strings.ContainsRune(raw, 0) || len(raw) > maxQueryText) {
			t.Fatalf("checkQueryText(%q) let it through", raw)
		}
	})
}
