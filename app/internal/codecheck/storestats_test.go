package codecheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// storeStatsPending are the store's files that still import app/stats,
// each with what for; the list only shrinks. A file here that no longer
// imports it fails too, so that it leaves the list.
var storeStatsPending = map[string]string{
	// A computation: RunAggregate and RunSteps summarise the inter-token
	// latencies counted in SQL with stats.SummarizeRepeated, and agentd
	// calls RunAggregate directly.
	"app/store/run_summary.go": "the ITL distribution (stats.SummarizeRepeated)",
}

// TestStoreComputesNoStatistics holds docs/packages.md's line for the
// store: it reads and writes rows and computes no statistics, so no
// non-test file of app/store imports app/stats beyond the pending list
// above (docs/concepts.md#the-conclusions-engine).
func TestStoreComputesNoStatistics(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	importers := map[string]bool{}
	files := 0
	err := eachSourceFile(root, true, func(path, rel string) error {
		if !strings.HasPrefix(rel, "app/store/") || strings.Count(rel, "/") != 2 || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == module+"/app/stats" {
				importers[rel] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("only %d store files found: the walk is not looking at app/store", files)
	}
	for _, rel := range slices.Sorted(maps.Keys(importers)) {
		if _, ok := storeStatsPending[rel]; !ok {
			t.Errorf("%s imports app/stats: the store reads and writes rows; compute in app/conclude (or app/stats) and pass the store plain columns", rel)
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(storeStatsPending)) {
		if !importers[rel] {
			t.Errorf("%s no longer imports app/stats: take it off storeStatsPending", rel)
		}
	}
}
