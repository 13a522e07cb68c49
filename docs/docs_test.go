package docs_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// citation is a page of docs/ cited with its anchor, in any case: a page
// cited in capitals is looked for as written, and found only when a page
// of that name exists.
var citation = regexp.MustCompile(`(?i)docs/([a-z0-9_-]+)\.md(#[a-z0-9_-]+)?`)

// walkSources calls fn with the path and text of every file of the
// repository with one of exts (or named Makefile or Dockerfile), leaving
// out hidden and build folders, JavaScript dependencies, the folders
// named in skip and generated templ files (their paths are templ's,
// relative to views/).
func walkSources(t *testing.T, exts, skip []string, fn func(path, text string)) {
	t.Helper()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(name, ".") || name == "bin" || name == "node_modules" || name == "dist" || slices.Contains(skip, name)) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_templ.go") || !slices.Contains(exts, filepath.Ext(name)) && name != "Makefile" && name != "Dockerfile" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCodeCitesPagesThatExist: every "docs/PAGE.md#ANCHOR" a comment, a
// migration, a config file or an error message cites, in any case, names
// a page and a heading that exist.
func TestCodeCitesPagesThatExist(t *testing.T) {
	s := load(t)
	n := 0
	walkSources(t, []string{".go", ".templ", ".sql", ".yaml", ".yml", ".sh"}, []string{"docs"}, func(path, text string) {
		for _, m := range citation.FindAllString(text, -1) {
			n++
			if msg := s.Resolve(m); msg != "" {
				t.Errorf("%s cites %s: %s", path, m, msg)
			}
		}
	})
	if n < 20 {
		t.Errorf("found %d citations of docs/ in the code, expected the design citations at least", n)
	}
	t.Logf("%d citations checked", n)
}

// citedFile is a repository file named by its path from the top
// (app/store/store.go, views/said/said.go), not inside a URL or a longer
// path.
var citedFile = regexp.MustCompile("(?:^|[\\s\"'(`\\[,;:])((?:app|agentd|assets|cmd|docs|e2e|handlers|jobs|migrations|sdk|views)/[A-Za-z0-9_./-]*\\.(?:go|templ|toml|sql|sh|ya?ml|md|ts|json))\\b")

// TestCitedFilesExist: every repository file a comment, a catalogue file,
// a script or a page names by its path exists. Migrations are left out:
// each says what was true when it was written and is never edited again.
func TestCitedFilesExist(t *testing.T) {
	placeholders := map[string]bool{"docs/PAGE.md": true} // development.md says how pages are cited
	n := 0
	exts := []string{".go", ".templ", ".toml", ".sql", ".sh", ".yaml", ".yml", ".md"}
	walkSources(t, exts, []string{"migrations"}, func(path, text string) {
		for _, m := range citedFile.FindAllStringSubmatch(text, -1) {
			if placeholders[m[1]] {
				continue
			}
			n++
			if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(m[1]))); err != nil {
				t.Errorf("%s names %s, which is not in the repository", path, m[1])
			}
		}
	})
	if n < 50 {
		t.Errorf("found %d files named in the repository, expected more: is the walk looking at it?", n)
	}
	t.Logf("%d named files checked", n)
}
