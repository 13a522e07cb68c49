package docs_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

var mapRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|(.*)$")

// TestPackageMapListsEveryPackage keeps the package map (packages.md)
// whole: every package `go list ./...` names has its row, and no row names
// a package that is gone. The README links the map instead of copying it,
// and a test keeps it that way.
func TestPackageMapListsEveryPackage(t *testing.T) {
	list := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...")
	list.Dir = ".." // the module's root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	prefix := strings.TrimSpace(string(mod)) + "/"
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(p, prefix))
	}
	sort.Strings(pkgs)
	if len(pkgs) < 50 {
		t.Fatalf("go list named %d packages: it is not looking at the module", len(pkgs))
	}
	b, err := os.ReadFile("packages.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range mapRow.FindAllStringSubmatch(string(b), -1) {
		listed[m[1]] = true
	}
	for _, p := range pkgs {
		if !listed[p] {
			t.Errorf("package %s is missing from docs/packages.md: add a row \"| `%s` | what it holds, in one line |\" to its table", p, p)
		}
	}
	for p := range listed {
		if !slices.Contains(pkgs, p) {
			t.Errorf("docs/packages.md lists %s, which is no package of the module (go list ./...): remove or rename its row", p)
		}
	}
}

// TestReadmeLinksThePackageMap: the README points to docs/packages.md for
// what is where and holds no copy of its rows, which would drift.
func TestReadmeLinksThePackageMap(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "](docs/packages.md") {
		t.Error("README.md does not link docs/packages.md")
	}
	if rows := mapRow.FindAllStringSubmatch(string(b), -1); len(rows) > 0 {
		t.Errorf("README.md copies %d rows of the package map (the first: %s); link docs/packages.md instead", len(rows), rows[0][1])
	}
}
