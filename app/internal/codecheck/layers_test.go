package codecheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of the repository starts with.
const module = "github.com/ruckus/ruckus"

// layer is one rung of docs/packages.md#layers: its number (1 is the
// bottom) and the package names and name/... patterns it holds.
type layer struct {
	n     int
	names []string
}

var (
	layerItem = regexp.MustCompile(`^(\d+)\. (.+?) —( |$)`)
	backticks = regexp.MustCompile("`([^`]+)`")
)

// parseLayers reads the numbered list under the "## Layers" heading of a
// markdown page: each item's package names are the back-quoted words
// before its dash.
func parseLayers(page string) ([]layer, error) {
	_, section, ok := strings.Cut(page, "\n## Layers\n")
	if !ok {
		return nil, fmt.Errorf("no \"## Layers\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var layers []layer
	for _, line := range strings.Split(section, "\n") {
		m := layerItem.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if n != len(layers)+1 {
			return nil, fmt.Errorf("layer %d comes after layer %d", n, len(layers))
		}
		l := layer{n: n}
		for _, name := range backticks.FindAllStringSubmatch(m[2], -1) {
			l.names = append(l.names, name[1])
		}
		if len(l.names) == 0 {
			return nil, fmt.Errorf("layer %d names no package", n)
		}
		layers = append(layers, l)
	}
	if len(layers) < 2 {
		return nil, fmt.Errorf("%d layers found, want an order of at least two", len(layers))
	}
	return layers, nil
}

// layerOf is the number of the layer holding pkg (a path inside the
// module), 0 when none does. An exact name beats a pattern, and a longer
// pattern a shorter one.
func layerOf(layers []layer, pkg string) int {
	best, bestLen := 0, -1
	for _, l := range layers {
		for _, name := range l.names {
			score := -1
			if name == pkg {
				score = 1 << 20
			} else if base, ok := strings.CutSuffix(name, "/..."); ok && (pkg == base || strings.HasPrefix(pkg, base+"/")) {
				score = len(base)
			}
			if score > bestLen {
				best, bestLen = l.n, score
			}
		}
	}
	return best
}

// upwardImports lists, sorted, every package of imports (a package → the
// module's packages it imports) that is in no layer, and every import
// that runs from a layer to one above it.
func upwardImports(layers []layer, imports map[string][]string) []string {
	var bad []string
	for pkg, deps := range imports {
		from := layerOf(layers, pkg)
		if from == 0 {
			bad = append(bad, fmt.Sprintf("\t%s is in no layer", pkg))
			continue
		}
		for _, dep := range deps {
			if to := layerOf(layers, dep); to > from {
				bad = append(bad, fmt.Sprintf("\t%s (layer %d) imports %s (layer %d)", pkg, from, dep, to))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// moduleImports is what `go list ./...` says each package of the module
// imports from the module, tests left out, paths relative to the module.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	list := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := inModule(fields[0])
		imports[pkg] = nil
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, module+"/") || dep == module {
				imports[pkg] = append(imports[pkg], inModule(dep))
			}
		}
	}
	return imports
}

func inModule(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

// TestImportsRunDownTheLayers fails naming every import of the module's
// packages that runs upward in the layer order of docs/packages.md#layers
// (the contract importing the catalogue, the store importing a page), and
// every package that order does not place.
func TestImportsRunDownTheLayers(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, "docs", "packages.md"))
	if err != nil {
		t.Fatal(err)
	}
	layers, err := parseLayers(string(page))
	if err != nil {
		t.Fatalf("docs/packages.md#layers: %v", err)
	}
	imports := moduleImports(t, root)
	if len(imports) < 50 {
		t.Fatalf("go list named %d packages: it is not looking at the module", len(imports))
	}
	if bad := upwardImports(layers, imports); len(bad) > 0 {
		t.Errorf("%d import(s) against the layer order of docs/packages.md#layers; move the code down, or the package, and say so there:\n%s",
			len(bad), strings.Join(bad, "\n"))
	}
}

// TestUpwardImportsBoundary checks the rule on a made-up page and graph:
// imports down and within a layer pass; one up, and a package in no
// layer, are named; an exact name beats its parent's pattern.
func TestUpwardImportsBoundary(t *testing.T) {
	page := "# P\n\n## Layers\n\nSome words.\n\n" +
		"1. `jobs` — the contract (`rivertype` is not a name here).\n" +
		"2. `app/i18n` — foundations.\n" +
		"3. `app/...`, `agentd/...` — the library.\n" +
		"4. `agentd`, `cmd/...` — programs.\n\n## Next\n\n5. `views` — not a layer.\n"
	layers, err := parseLayers(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 4 || strings.Join(layers[0].names, ",") != "jobs" || strings.Join(layers[2].names, ",") != "app/...,agentd/..." {
		t.Fatalf("parseLayers = %+v", layers)
	}
	got := upwardImports(layers, map[string][]string{
		"jobs":         {"app/i18n"},          // up: named
		"app/i18n":     nil,                   // nothing
		"app/bench":    {"app/store", "jobs"}, // within and down
		"app/store":    {"agentd"},            // up to a program: named
		"agentd":       {"agentd/load", "app/bench"},
		"agentd/load":  {"jobs"},
		"views/layout": {"app/i18n"}, // in no layer: named
	})
	want := []string{
		"\tapp/store (layer 3) imports agentd (layer 4)",
		"\tjobs (layer 1) imports app/i18n (layer 2)",
		"\tviews/layout is in no layer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("upwardImports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := parseLayers("# P\n\n## Layers\n\n2. `jobs` — out of order.\n1. `app` — x.\n"); err == nil {
		t.Error("parseLayers took a list out of order")
	}
}
