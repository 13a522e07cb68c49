package codecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, counted from its func
// line to its closing brace. Past it a function does several things and
// reads better as named steps.
const maxFuncLines = 80

// TestFunctionLength fails naming every function, function literals
// included, longer than maxFuncLines in the repository's hand-written Go:
// generated files, tests and the self-benchmark programs (cmd/selfbench)
// are left out.
func TestFunctionLength(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	var long []string
	files := 0
	err := eachSourceFile(root, true, func(path, rel string) error {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		if ast.IsGenerated(f) {
			return nil
		}
		files++
		long = append(long, longFuncs(fset, f, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files found under %s: the walk is not looking at the repository", files, root)
	}
	if len(long) > 0 {
		t.Errorf("%d function(s) longer than %d lines; split each into named steps:\n%s",
			len(long), maxFuncLines, strings.Join(long, "\n"))
	}
}

// eachSourceFile calls fn with the path of every file below root, and
// that path relative to root with slashes, leaving out the directories
// skipDir names, and the self-benchmark programs when skipSelfbench.
func eachSourceFile(root string, skipSelfbench bool, fn func(path, rel string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			dirRel := ""
			if skipSelfbench {
				dirRel = rel
			}
			if path != root && skipDir(d.Name(), dirRel) {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(path, rel)
	})
}

// skipDir reports whether the walk leaves out a directory: hidden ones,
// test data, JavaScript dependencies and the self-benchmark programs.
func skipDir(name, rel string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
		name == "testdata" || name == "node_modules" || name == "vendor" ||
		rel == "cmd/selfbench"
}

// longFuncs lists, as "path:line name (n lines)", the functions and
// function literals in f longer than maxFuncLines.
func longFuncs(fset *token.FileSet, f *ast.File, rel string) []string {
	var long []string
	var outer string // the declaration a literal sits in
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		var name string
		switch fn := n.(type) {
		case *ast.FuncDecl:
			body, outer = fn.Body, funcName(fn)
			name = outer
		case *ast.FuncLit:
			body, name = fn.Body, "func literal in "+outer
		default:
			return true
		}
		if body == nil {
			return true
		}
		start := fset.Position(n.Pos()).Line
		if lines := fset.Position(body.Rbrace).Line - start + 1; lines > maxFuncLines {
			long = append(long, fmt.Sprintf("\t%s:%d %s (%d lines)", rel, start, name, lines))
		}
		return true
	})
	return long
}

// funcName is a declaration's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok { // a generic type's method
		typ = idx.X
	}
	if idx, ok := typ.(*ast.IndexListExpr); ok {
		typ = idx.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// repoRoot is the repository's top directory: the nearest parent of the
// test's directory holding the main module's go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/ruckus/ruckus\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of module github.com/ruckus/ruckus above the test's directory")
		}
		dir = parent
	}
}

// TestLongFuncsBoundary checks the count on a made-up file: a function of
// exactly maxFuncLines lines passes, one line more is named, and a long
// literal is named as well as the method it sits in.
func TestLongFuncsBoundary(t *testing.T) {
	body := func(lines int) string { return strings.Repeat("\t_ = 0\n", lines-2) }
	src := "package p\n\n" +
		"func fits() {\n" + body(maxFuncLines) + "}\n\n" +
		"func tooLong() {\n" + body(maxFuncLines+1) + "}\n\n" +
		"type T[K any] struct{}\n\n" +
		"func (*T[K]) m() {\n\t_ = func() {\n" + body(maxFuncLines+1) + "\t}\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := longFuncs(fset, f, "p.go")
	want := []string{
		fmt.Sprintf("\tp.go:%d tooLong (%d lines)", maxFuncLines+4, maxFuncLines+1),
		fmt.Sprintf("\tp.go:%d T.m (%d lines)", 2*maxFuncLines+8, maxFuncLines+3),
		fmt.Sprintf("\tp.go:%d func literal in T.m (%d lines)", 2*maxFuncLines+9, maxFuncLines+1),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("longFuncs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
