// Package docs is Ruckus's documentation: the Markdown pages of this
// folder, embedded in the binary so the server serves the same text at
// /docs that a reader finds in the repository, and rendered to HTML here.
//
// Rendering is CommonMark with GitHub's tables, autolinks and
// strikethrough (goldmark). Raw HTML in a page is never passed through, so
// a page cannot add a script or a style the site's Content-Security-Policy
// would have to allow. Heading ids follow GitHub's rule, so a link such as
// metrics.md#ttft-time-to-first-token works both on GitHub and under /docs.
package docs

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

//go:embed *.md images
var files embed.FS

// Files is the embedded folder: the pages (NAME.md) and images/.
func Files() fs.FS { return files }

// URLPrefix is where the server serves the pages: /docs is the index,
// /docs/NAME the page NAME.md, /docs/images/FILE an image.
const URLPrefix = "/docs"

// Page is one rendered page.
type Page struct {
	// Name is the file name without ".md" ("metrics"); the index is
	// "index".
	Name string
	// Title is the text of the page's first heading.
	Title string
	// HTML is the rendered page. It holds no raw HTML from the Markdown.
	HTML []byte
	// Anchors are the ids of the page's headings.
	Anchors []string
}

// HasAnchor says whether the page has a heading with id a.
func (p *Page) HasAnchor(a string) bool { return slices.Contains(p.Anchors, a) }

// URL is where the server serves the page.
func (p *Page) URL() string {
	if p.Name == "index" {
		return URLPrefix
	}
	return URLPrefix + "/" + p.Name
}

// Site is every page, rendered once.
type Site struct {
	pages map[string]*Page
	order []string
}

// Load renders every embedded page.
func Load() (*Site, error) {
	names, err := fs.Glob(files, "*.md")
	if err != nil {
		return nil, err
	}
	s := &Site{pages: map[string]*Page{}}
	for _, f := range names {
		src, err := files.ReadFile(f)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(f, ".md")
		p, err := render(name, src)
		if err != nil {
			return nil, fmt.Errorf("docs/%s: %w", f, err)
		}
		s.pages[name] = p
		s.order = append(s.order, name)
	}
	return s, nil
}

// Page returns the page called name ("metrics"), or nil.
func (s *Site) Page(name string) *Page { return s.pages[name] }

// Pages lists every page, by file name.
func (s *Site) Pages() []*Page {
	out := make([]*Page, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, s.pages[n])
	}
	return out
}

// Resolve checks a link to the documentation, in either form the project
// uses: "/docs/metrics#goodput" (the app's pages) or
// "docs/metrics.md#goodput" (code comments). It says what is wrong, or "".
func (s *Site) Resolve(link string) string {
	rest, ok := strings.CutPrefix(link, URLPrefix)
	if !ok {
		rest, ok = strings.CutPrefix(link, "docs")
	}
	if !ok {
		return "not a link into docs/"
	}
	rest = strings.TrimPrefix(rest, "/")
	name, anchor, _ := strings.Cut(rest, "#")
	name = strings.TrimSuffix(name, ".md")
	if name == "" {
		name = "index"
	}
	p := s.pages[name]
	if p == nil {
		return fmt.Sprintf("no page docs/%s.md", name)
	}
	if anchor != "" && !p.HasAnchor(anchor) {
		return fmt.Sprintf("docs/%s.md has no heading with the anchor #%s (its anchors: %s)", name, anchor, strings.Join(p.Anchors, ", "))
	}
	return ""
}

var md = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify),
	goldmark.WithParserOptions(
		parser.WithAutoHeadingID(),
		parser.WithASTTransformers(util.Prioritized(linkRewriter{}, 100)),
	),
	// No html.WithUnsafe: raw HTML and javascript: links are left out.
)

func render(name string, src []byte) (*Page, error) {
	ids := &githubIDs{seen: map[string]int{}}
	ctx := parser.NewContext(parser.WithIDs(ids))
	doc := md.Parser().Parse(text.NewReader(src), parser.WithContext(ctx))
	p := &Page{Name: name}
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		id, _ := h.AttributeString("id")
		idb, _ := id.([]byte)
		if p.Title == "" {
			p.Title = plainText(h, src)
		}
		p.Anchors = append(p.Anchors, string(idb))
		// A link to the heading itself, after its text.
		self := ast.NewLink()
		self.Destination = []byte("#" + string(idb))
		self.SetAttributeString("class", []byte("anchor"))
		self.SetAttributeString("aria-label", []byte("Link to this section"))
		self.AppendChild(self, ast.NewString([]byte("#")))
		h.AppendChild(h, self)
		return ast.WalkSkipChildren, nil
	})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := md.Renderer().Render(&buf, src, doc); err != nil {
		return nil, err
	}
	// Wide tables and code scroll inside the page, in a region a keyboard
	// can reach, as the app's own tables do. The Markdown's raw HTML is
	// left out, so these tags are the renderer's own.
	html := bytes.ReplaceAll(buf.Bytes(), []byte("<table>"), []byte(`<div class="table-wrap" tabindex="0"><table>`))
	html = bytes.ReplaceAll(html, []byte("</table>"), []byte("</table></div>"))
	p.HTML = bytes.ReplaceAll(html, []byte("<pre>"), []byte(`<pre tabindex="0">`))
	if p.Title == "" {
		p.Title = name
	}
	return p, nil
}

// plainText is a heading's text without its markup.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// linkRewriter points the pages' links at where the server serves them:
// "metrics.md#ttft" becomes "/docs/metrics#ttft", "images/home.png"
// "/docs/images/home.png". Links elsewhere are left as they are.
type linkRewriter struct{}

func (linkRewriter) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			l.Destination = []byte(servedURL(string(l.Destination)))
		case *ast.Image:
			l.Destination = []byte(servedURL(string(l.Destination)))
		}
		return ast.WalkContinue, nil
	})
}

var localPage = regexp.MustCompile(`^([a-z0-9-]+)\.md(#.*)?$`)

func servedURL(dest string) string {
	if u, err := url.Parse(dest); err != nil || u.Scheme != "" || strings.HasPrefix(dest, "/") || strings.HasPrefix(dest, "#") {
		return dest
	}
	if m := localPage.FindStringSubmatch(dest); m != nil {
		if m[1] == "index" {
			return URLPrefix + m[2]
		}
		return URLPrefix + "/" + m[1] + m[2]
	}
	if strings.HasPrefix(dest, "images/") {
		return URLPrefix + "/" + path.Clean(dest)
	}
	return dest
}

// githubIDs makes heading ids as GitHub does: lower case, every character
// but letters, digits, spaces, "-" and "_" dropped, spaces made "-", and
// "-1", "-2" … after a repeated id.
type githubIDs struct{ seen map[string]int }

func (g *githubIDs) Generate(value []byte, _ ast.NodeKind) []byte {
	id := Anchor(string(value))
	n := g.seen[id]
	g.seen[id] = n + 1
	if n > 0 {
		id = fmt.Sprintf("%s-%d", id, n)
	}
	return []byte(id)
}

func (g *githubIDs) Put(value []byte) { g.seen[string(value)]++ }

// Anchor is the id GitHub gives a heading with this text.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Image returns docs/images/file, a PNG.
func Image(file string) ([]byte, error) {
	if !strings.HasSuffix(file, ".png") || strings.ContainsAny(file, `/\`) {
		return nil, fs.ErrNotExist
	}
	return files.ReadFile("images/" + file)
}
