package docs_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/docs"
)

func load(t *testing.T) *docs.Site {
	t.Helper()
	s, err := docs.Load()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The ids are GitHub's, so one link works in the repository and at /docs.
func TestAnchorsAreGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"TTFT (time to first token)":                       "ttft-time-to-first-token",
		"Throughput: output tokens/s and requests/s":       "throughput-output-tokenss-and-requestss",
		"The fleet document's dialect":                     "the-fleet-documents-dialect",
		"Scorers with options: `regex`, `json-schema`":     "scorers-with-options-regex-json-schema",
		"bench-verdict: the tests behind every conclusion": "bench-verdict-the-tests-behind-every-conclusion",
	} {
		if got := docs.Anchor(heading); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestEveryPageRendersWithATitle renders the whole tree; the index names
// every other page, so a reader can reach each from it.
func TestEveryPageRendersWithATitle(t *testing.T) {
	s := load(t)
	if len(s.Pages()) < 20 {
		t.Fatalf("%d pages", len(s.Pages()))
	}
	index, err := fs.ReadFile(docs.Files(), "index.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Pages() {
		if p.Title == "" || len(p.HTML) == 0 || len(p.Anchors) == 0 {
			t.Errorf("%s: title %q, %d bytes, %d headings", p.Name, p.Title, len(p.HTML), len(p.Anchors))
		}
		if p.Name != "index" && !bytes.Contains(index, []byte("("+p.Name+".md")) {
			t.Errorf("index.md does not link to %s.md", p.Name)
		}
	}
}

// TestRawHTMLIsLeftOut: a page's Markdown cannot bring a script, a style or
// a javascript: link past the site's CSP.
func TestRawHTMLIsLeftOut(t *testing.T) {
	p := docs.RenderForTest(t, "# Title\n\n<script>alert(1)</script>\n\n<b style=\"color:red\" onclick=\"x()\">b</b>\n\n[a](javascript:alert(1)) [b](metrics.md#goodput) ![i](images/home.png)\n")
	html := string(p.HTML)
	for _, bad := range []string{"<script", "onclick", "style=", "javascript:"} {
		if strings.Contains(html, bad) {
			t.Errorf("rendered page holds %q:\n%s", bad, html)
		}
	}
	for _, good := range []string{`href="/docs/metrics#goodput"`, `src="/docs/images/home.png"`, `id="title"`} {
		if !strings.Contains(html, good) {
			t.Errorf("rendered page lacks %s:\n%s", good, html)
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinksBetweenPagesResolve: every link from one page to another (and
// to an anchor in it) and every image lands on something that exists.
func TestLinksBetweenPagesResolve(t *testing.T) {
	s := load(t)
	files, _ := filepath.Glob("*.md")
	files = append(files, "../README.md")
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			dest := m[1]
			if strings.Contains(dest, "://") || strings.HasPrefix(dest, "mailto:") {
				continue
			}
			if f == "../README.md" {
				rest, ok := strings.CutPrefix(dest, "docs/")
				if !ok {
					continue
				}
				dest = rest
			}
			n++
			if strings.HasPrefix(dest, "images/") {
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: image %s: %v", f, dest, err)
				}
				continue
			}
			if strings.HasPrefix(dest, "#") {
				dest = strings.TrimSuffix(filepath.Base(f), ".md") + ".md" + dest
			}
			if msg := s.Resolve("docs/" + dest); msg != "" {
				t.Errorf("%s: link %s: %s", f, m[1], msg)
			}
		}
	}
	t.Logf("%d links checked", n)
}

var citation = regexp.MustCompile(`docs/([a-z0-9-]+)\.md(#[a-z0-9_-]+)?`)

// TestCodeCitesPagesThatExist: every "docs/PAGE.md#ANCHOR" a comment, a
// migration, a config file or an error message cites names a page and a
// heading that exist.
func TestCodeCitesPagesThatExist(t *testing.T) {
	s := load(t)
	n := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", ".driver", ".tools", ".data", "bin", "docs":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".templ", ".sql", ".yaml", ".yml", ".sh":
		default:
			if d.Name() != "Makefile" && d.Name() != "Dockerfile" {
				return nil
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range citation.FindAllString(string(b), -1) {
			n++
			if msg := s.Resolve(m); msg != "" {
				t.Errorf("%s cites %s: %s", path, m, msg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Errorf("found %d citations of docs/ in the code, expected the design citations at least", n)
	}
	t.Logf("%d citations checked", n)
}

var mapRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|(.*)$")

// TestPackageMapListsEveryPackage keeps the package map whole, in
// docs/packages.md and in the README's code map alike: every package `go
// list ./...` names has its line, no line names a package that is gone,
// and both files say the same of each package.
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
	maps := map[string]map[string]string{}
	for _, file := range []string{"packages.md", "../README.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]string{}
		for _, m := range mapRow.FindAllStringSubmatch(string(b), -1) {
			listed[m[1]] = m[2]
		}
		maps[file] = listed
		for _, p := range pkgs {
			if _, ok := listed[p]; !ok {
				t.Errorf("package %s is missing from %s: add a row \"| `%s` | what it holds, in one line |\" to its table", p, file, p)
			}
		}
		for p := range listed {
			if !slices.Contains(pkgs, p) {
				t.Errorf("%s lists %s, which is no package of the module (go list ./...): remove or rename its row", file, p)
			}
		}
	}
	// The README's links lead into docs/; otherwise the rows are the same.
	for p, line := range maps["packages.md"] {
		if readme, ok := maps["../README.md"][p]; ok && strings.ReplaceAll(readme, "](docs/", "](") != line {
			t.Errorf("%s: the README's code map says %q, docs/packages.md %q", p, readme, line)
		}
	}
}
