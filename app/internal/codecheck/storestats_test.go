package codecheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// storeStatsPending are the store's files that still import app/stats,
// each with what for; the list only shrinks, and is empty now that a
// run's summary is computed in app/summary. A file here that no longer
// imports it fails too, so that it leaves the list.
var storeStatsPending = map[string]string{}

// TestStoreComputesNoStatistics holds docs/packages.md's line for the
// store: it reads and writes rows and computes no statistics, so no
// non-test file of app/store imports app/stats beyond the pending list
// above (docs/concepts.md#the-conclusions-engine).
func TestStoreComputesNoStatistics(t *testing.T) {
	importers, files, err := storeStatsImporters(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("only %d store files found: the walk is not looking at app/store", files)
	}
	for _, problem := range storeStatsProblems(importers, storeStatsPending) {
		t.Error(problem)
	}
}

// The check finds a store file that imports app/stats, whatever its
// import is named, and leaves the store's tests and other packages alone.
func TestStoreStatsCheckCatchesAnImporter(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The files are made up: named by joining, so that no path here reads
	// as a file of the repository (docs/docs_test.go checks those).
	store := func(name string) string { return "app/store/" + name }
	for i := range 10 {
		write(store(fmt.Sprintf("plain%d.go", i)), "package store\n\nimport \"context\"\n\nvar _ context.Context\n")
	}
	write(store("figures.go"), "package store\n\nimport st \""+module+"/app/stats\"\n\nvar _ = st.Percentile\n")
	write(store("figures_test.go"), "package store\n\nimport \""+module+"/app/stats\"\n\nvar _ = stats.Percentile\n")
	write("app/summary/"+"summary.go", "package summary\n\nimport \""+module+"/app/stats\"\n\nvar _ = stats.Percentile\n")
	importers, files, err := storeStatsImporters(root)
	if err != nil {
		t.Fatal(err)
	}
	if files != 11 {
		t.Fatalf("%d store files walked, want 11", files)
	}
	got := storeStatsProblems(importers, map[string]string{})
	if len(got) != 1 || !strings.HasPrefix(got[0], store("figures.go")+" imports app/stats") {
		t.Fatalf("problems %q, want one naming %s", got, store("figures.go"))
	}
	got = storeStatsProblems(importers, map[string]string{store("figures.go"): "x", store("plain0.go"): "y"})
	if len(got) != 1 || !strings.HasPrefix(got[0], store("plain0.go")+" no longer imports") {
		t.Fatalf("problems %q, want one naming %s", got, store("plain0.go"))
	}
}

// storeStatsImporters walks root's app/store (its non-test Go files, not
// its subpackages) and returns the files that import app/stats and how
// many files it read.
func storeStatsImporters(root string) (map[string]bool, int, error) {
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
	return importers, files, err
}

// storeStatsProblems names each importer not on the pending list, and
// each file on it that no longer imports app/stats.
func storeStatsProblems(importers map[string]bool, pending map[string]string) []string {
	var out []string
	for _, rel := range slices.Sorted(maps.Keys(importers)) {
		if _, ok := pending[rel]; !ok {
			out = append(out, rel+" imports app/stats: the store reads and writes rows; compute in a domain package (app/summary, app/conclude) or app/stats and pass the store plain columns")
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(pending)) {
		if !importers[rel] {
			out = append(out, rel+" no longer imports app/stats: take it off storeStatsPending")
		}
	}
	return out
}
