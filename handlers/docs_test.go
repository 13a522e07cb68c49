package handlers_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestDocsAreServedToAnyone reads the documentation as a visitor who has
// not signed in: the index lists the pages, a page is the repository's
// Markdown rendered in the layout under the site's CSP, with its headings'
// anchors, and its images are served.
func TestDocsAreServedToAnyone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()

	idx := c.get("/docs")
	if idx.status != 200 {
		t.Fatalf("/docs: %d", idx.status)
	}
	if n := idx.doc.Find(`nav.docs-pages a`).Length(); n < 20 {
		t.Errorf("the index lists %d pages, want every page of docs/", n)
	}
	if got := idx.text(`[data-testid="docs-page"] h1`); !strings.HasPrefix(got, "Ruckus documentation") {
		t.Errorf("index title %q", got)
	}

	m := c.get("/docs/metrics")
	if m.status != 200 {
		t.Fatalf("/docs/metrics: %d", m.status)
	}
	if csp := m.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("the docs page's CSP: %q", csp)
	}
	if m.doc.Find(`h2#goodput a.anchor[href="#goodput"]`).Length() != 1 {
		t.Error("the Goodput heading has no anchor of its own")
	}
	// Links between pages point at the served pages, not at the .md files.
	if href, _ := m.doc.Find(`a[href^="/docs/results"]`).First().Attr("href"); href == "" {
		t.Error("a link to results.md was not rewritten to /docs/results")
	}
	if m.doc.Find(`a[href$=".md"]`).Length() != 0 {
		t.Error("a link to a .md file was left as it is")
	}
	if n := m.doc.Find(`[data-testid="docs-page"] script, [data-testid="docs-page"] [style]`).Length(); n != 0 {
		t.Errorf("%d scripts or inline styles in a docs page's text", n)
	}

	gs := c.get("/docs/getting-started")
	src, ok := gs.doc.Find(`[data-testid="docs-page"] img`).First().Attr("src")
	if !ok || !strings.HasPrefix(src, "/docs/images/") {
		t.Fatalf("getting started shows no screenshot (src %q)", src)
	}
	img := c.get(src)
	if img.status != 200 || img.header.Get("Content-Type") != "image/png" {
		t.Errorf("%s: %d %s", src, img.status, img.header.Get("Content-Type"))
	}

	for _, path := range []string{"/docs/no-such-page", "/docs/images/no.png", "/docs/images/..%2Fembed.go"} {
		if res := c.get(path); res.status != 404 {
			t.Errorf("%s: %d, want 404", path, res.status)
		}
	}
}

// helpLink is a link from an app page into the documentation, as the
// templates and handlers write it.
var helpLink = regexp.MustCompile(`"(/docs(?:/[a-z0-9-]+)?(?:#[a-z0-9_-]+)?)"`)

// TestAppPagesLinkToSectionsThatExist finds every link into /docs that the
// templates and handlers write and reads each from the server: the page
// must exist and carry the heading the link's anchor names.
func TestAppPagesLinkToSectionsThatExist(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	links := map[string][]string{}
	for _, root := range []string{"../views", "."} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !strings.HasSuffix(path, ".templ") && !(strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && !strings.HasSuffix(path, "_templ.go")) {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range helpLink.FindAllStringSubmatch(string(b), -1) {
				links[m[1]] = append(links[m[1]], path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(links) < 10 {
		t.Fatalf("found %d links into /docs in the templates, want the help links of every main page", len(links))
	}
	pages := map[string]*goquery.Document{}
	for link, where := range links {
		page, anchor, _ := strings.Cut(link, "#")
		doc, ok := pages[page]
		if !ok {
			res := c.get(page)
			if res.status != 200 {
				t.Errorf("%s (linked from %s): %d", link, strings.Join(where, ", "), res.status)
				continue
			}
			doc, pages[page] = res.doc, res.doc
		}
		if anchor != "" && doc.Find(`[id="`+anchor+`"]`).Length() == 0 {
			t.Errorf("%s (linked from %s): the page has no #%s", link, strings.Join(where, ", "), anchor)
		}
	}
	t.Logf("%d links into /docs from %d pages of it checked", len(links), len(pages))
}
