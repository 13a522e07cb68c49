package codecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// datasetInsert is SQL that creates a dataset or adds items to one.
var datasetInsert = regexp.MustCompile(`(?i)\bINSERT\s+INTO\s+dataset(s|_items)\b`)

// datasetWriters lists, as "path:function", the functions in f that write
// a dataset: SQL inserting into its tables (datasetInsert), or a call of
// a COPY (a function named copy…) given the items' table by name.
func datasetWriters(f *ast.File, rel string) []string {
	var found []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && datasetInsert.MatchString(unquoted(lit)) {
				found = append(found, rel+":"+funcName(fn))
			}
			if call, ok := n.(*ast.CallExpr); ok && isCopy(call.Fun) && namesItemsTable(call) {
				found = append(found, rel+":"+funcName(fn))
			}
			return true
		})
	}
	return slices.Compact(found)
}

// unquoted is a string literal's value; "" for any other literal.
func unquoted(lit *ast.BasicLit) string {
	if lit.Kind != token.STRING {
		return ""
	}
	s, _ := strconv.Unquote(lit.Value)
	return s
}

// isCopy reports whether a call's function is named copy… (copySeq2,
// pgx's CopyFrom).
func isCopy(fun ast.Expr) bool {
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	case *ast.IndexExpr: // an instantiated generic function
		return isCopy(f.X)
	}
	return strings.HasPrefix(strings.ToLower(name), "copy")
}

// namesItemsTable reports whether "dataset_items" is a string in call's
// arguments (pgx.Identifier{"dataset_items"} included).
func namesItemsTable(call *ast.CallExpr) bool {
	found := false
	for _, arg := range call.Args {
		ast.Inspect(arg, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && unquoted(lit) == "dataset_items" {
				found = true
			}
			return !found
		})
	}
	return found
}

// TestOneDatasetWriter holds docs/datasets.md#one-upload-path: every path
// that makes a dataset (an upload, a generated dataset, a judge's prompts,
// the test kit's fixtures) goes through the store's one call, so a
// dataset is written whole or not at all in one place. It fails naming
// any other function in the repository's Go, tests included, that
// inserts a dataset or copies items into one.
func TestOneDatasetWriter(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	var writers []string
	err := eachSourceFile(root, false, func(path, rel string) error {
		if !strings.HasSuffix(rel, ".go") || strings.HasPrefix(rel, "app/internal/codecheck/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		writers = append(writers, datasetWriters(f, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"app/store/datasets.go:Queries.WriteDataset"}
	if !slices.Equal(writers, want) {
		t.Errorf("datasets are written by %v, want only %v: make the dataset through store.WriteDataset (or ingest.Upload)", writers, want)
	}
}

// TestDatasetWritersBoundary checks the finder on a made-up file: the
// INSERT and the COPY of items are found in the function holding them,
// once each; reads of the same tables, and their names outside a COPY
// (a count in a test), are not writes.
func TestDatasetWritersBoundary(t *testing.T) {
	src := "package p\n\n" +
		"func insert() { _ = `INSERT INTO datasets (owner_id) VALUES (1)`; _ = \"insert into datasets(x)\" }\n\n" +
		"type Q struct{}\n\n" +
		"func (q *Q) items() { q.db.CopyFrom(ctx, pgx.Identifier{\"dataset_items\"}, nil, src) }\n\n" +
		"func read() { _ = `SELECT * FROM datasets d JOIN dataset_items i ON true`; _ = \"INSERT INTO datasets_archive\"; count(\"dataset_items\") }\n"
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := datasetWriters(f, "p.go")
	want := []string{"p.go:insert", "p.go:Q.items"}
	if !slices.Equal(got, want) {
		t.Fatalf("writers %v, want %v", got, want)
	}
}
