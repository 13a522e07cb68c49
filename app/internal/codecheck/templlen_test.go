package codecheck

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	parser "github.com/a-h/templ/parser/v2"
)

// TestComponentLength holds templ components to the 80-line rule of Go
// functions (docs/conventions.md#the-80-line-rule): a page is an outline
// of named fragments, each htmx target its own component. It fails naming
// every component longer than maxFuncLines.
func TestComponentLength(t *testing.T) {
	root := repoRoot(t)
	lengths := map[string]int{}
	err := eachSourceFile(root, true, func(path, rel string) error {
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
	if bad := longComponents(lengths); len(bad) > 0 {
		t.Errorf("%d templ component(s) against the 80-line rule; split each into named fragments:\n%s",
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
		name := strings.TrimSpace(c.Expression.Value)
		if strings.HasPrefix(name, "(") { // templ (t T) Name(…)
			_, name, _ = strings.Cut(name, ") ")
		}
		name, _, _ = strings.Cut(name, "(")
		lengths[rel+" "+strings.TrimSpace(name)] = int(c.Range.To.Line-c.Range.From.Line) + 1
	}
	return lengths, nil
}

// longComponents lists, sorted, the components of lengths over
// maxFuncLines.
func longComponents(lengths map[string]int) []string {
	var bad []string
	for name, n := range lengths {
		if n > maxFuncLines {
			bad = append(bad, fmt.Sprintf("\t%s (%d lines)", name, n))
		}
	}
	sort.Strings(bad)
	return bad
}

// TestComponentLengthBoundary checks the count on a made-up file: a
// component of exactly maxFuncLines lines passes and one line more is
// named, whatever its parameters.
func TestComponentLengthBoundary(t *testing.T) {
	body := func(lines int) string { return strings.Repeat("\t<p>x</p>\n", lines-2) }
	src := "package p\n\n" +
		"templ Fits() {\n" + body(maxFuncLines) + "}\n\n" +
		"templ TooLong(n int) {\n" + body(maxFuncLines+1) + "}\n\n" +
		"templ (v V) Method() {\n" + body(maxFuncLines+1) + "}\n\n" +
		"templ Short() {\n" + body(3) + "}\n"
	lengths, err := componentLengths("p.templ", src)
	if err != nil {
		t.Fatal(err)
	}
	if lengths["p.templ Fits"] != maxFuncLines || lengths["p.templ TooLong"] != maxFuncLines+1 || lengths["p.templ Short"] != 3 {
		t.Fatalf("componentLengths = %v", lengths)
	}
	got := longComponents(lengths)
	want := []string{
		fmt.Sprintf("\tp.templ Method (%d lines)", maxFuncLines+1),
		fmt.Sprintf("\tp.templ TooLong (%d lines)", maxFuncLines+1),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("longComponents:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if bad := longComponents(map[string]int{"p.templ Fits": maxFuncLines}); len(bad) != 0 {
		t.Errorf("a component of %d lines is named: %v", maxFuncLines, bad)
	}
}
