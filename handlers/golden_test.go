package handlers_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// update rewrites the golden files from what the code produces now:
// go test ./handlers/ -run TestExports -update (then read the diff).
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// Moments and generated ids differ from run to run; everything else in an
// export is compared byte for byte.
var (
	goldenTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:?\d{2})?)?`)
	goldenID   = regexp.MustCompile(`"id":"[^"]*"`)
	goldenUnix = regexp.MustCompile(`"created":\d+`)
)

// golden compares got, with its moments and generated ids masked, against
// testdata/NAME.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = goldenTime.ReplaceAllString(got, "<time>")
	got = goldenID.ReplaceAllString(got, `"id":"<id>"`)
	got = goldenUnix.ReplaceAllString(got, `"created":<unix>`)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}
