package codecheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	parser "github.com/a-h/templ/parser/v2"
)

// pendingComponents are the templ components still longer than
// maxFuncLines, each named "path name": the verdict, the comparison, the
// recommendation and the capacity planner (docs/verdict.md,
// docs/results.md, docs/history.md, docs/benchmarks.md), whose data flow
// is being rewritten. They are split into named fragments when that
// lands. The list can only shrink: TestComponentLength fails when a
// listed component is gone or already fits, so it has to be struck off.
var pendingComponents = []string{
	"views/benchmarks/verdict.templ VerdictBlock",
	"views/capacity/capacity.templ Page",
	"views/compare/compare.templ Page",
	"views/recommend/recommend.templ Page",
}

// TestComponentLength holds templ components to the 80-line rule of Go
// functions (docs/conventions.md#the-80-line-rule): a page is an outline
// of named fragments, each htmx target its own component. It fails naming
// every component longer than maxFuncLines that is not pending, and every
// pending one that no longer exists or is no longer too long.
func TestComponentLength(t *testing.T) {
	root := repoRoot(t)
	lengths := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && skipDir(d.Name(), rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".templ") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found, err := componentLengths(rel, string(src))
		for name, n := range found {
			lengths[name] = n
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lengths) < 50 {
		t.Fatalf("only %d templ components found under %s: the walk is not looking at the views", len(lengths), root)
	}
	if bad := longComponents(lengths, pendingComponents); len(bad) > 0 {
		t.Errorf("%d templ component(s) against the 80-line rule; split each into named fragments, and strike a split pending one off pendingComponents:\n%s",
			len(bad), strings.Join(bad, "\n"))
	}
}

// componentLengths is the length of each templ component in a .templ
// file's source, counted from its templ line to its closing brace, keyed
// "rel name".
func componentLengths(rel, src string) (map[string]int, error) {
	tf, err := parser.ParseString(src)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", rel, err)
	}
	lengths := map[string]int{}
	for _, n := range tf.Nodes {
		c, ok := n.(*parser.HTMLTemplate)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(c.Expression.Value, "(")
		if _, method, ok := strings.Cut(name, ") "); ok { // templ (t T) Name(…)
			name = method
		}
		lengths[rel+" "+strings.TrimSpace(name)] = int(c.Range.To.Line-c.Range.From.Line) + 1
	}
	return lengths, nil
}

// longComponents lists, sorted, the components of lengths over
// maxFuncLines that are not pending, and the pending ones that are
// missing or fit.
func longComponents(lengths map[string]int, pending []string) []string {
	var bad []string
	for name, n := range lengths {
		if n > maxFuncLines && !slices.Contains(pending, name) {
			bad = append(bad, fmt.Sprintf("\t%s (%d lines)", name, n))
		}
	}
	for _, name := range pending {
		n, ok := lengths[name]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("\t%s is pending but no longer exists", name))
		case n <= maxFuncLines:
			bad = append(bad, fmt.Sprintf("\t%s is pending but fits (%d lines)", name, n))
		}
	}
	sort.Strings(bad)
	return bad
}

// TestComponentLengthBoundary checks the count on a made-up file: a
// component of exactly maxFuncLines lines passes, one line more is named
// unless pending, and a pending component that fits or is gone is named.
func TestComponentLengthBoundary(t *testing.T) {
	body := func(lines int) string { return strings.Repeat("\t<p>x</p>\n", lines-2) }
	src := "package p\n\n" +
		"templ Fits() {\n" + body(maxFuncLines) + "}\n\n" +
		"templ TooLong(n int) {\n" + body(maxFuncLines+1) + "}\n\n" +
		"templ Waiting() {\n" + body(maxFuncLines+1) + "}\n\n" +
		"templ Short() {\n" + body(3) + "}\n"
	lengths, err := componentLengths("p.templ", src)
	if err != nil {
		t.Fatal(err)
	}
	if lengths["p.templ Fits"] != maxFuncLines || lengths["p.templ TooLong"] != maxFuncLines+1 {
		t.Fatalf("componentLengths = %v", lengths)
	}
	got := longComponents(lengths, []string{"p.templ Waiting", "p.templ Short", "p.templ Gone"})
	want := []string{
		"\tp.templ Gone is pending but no longer exists",
		"\tp.templ Short is pending but fits (3 lines)",
		fmt.Sprintf("\tp.templ TooLong (%d lines)", maxFuncLines+1),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("longComponents:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if bad := longComponents(map[string]int{"p.templ Fits": maxFuncLines}, nil); len(bad) != 0 {
		t.Errorf("a component of %d lines is named: %v", maxFuncLines, bad)
	}
}
