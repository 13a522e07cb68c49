package handlers

import (
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/docs"
	docsview "github.com/ruckus/ruckus/views/docs"
)

// docsPages serves the documentation (docs/*.md, embedded) at /docs: the
// same Markdown a reader finds in the repository, rendered once when the
// server starts. Anyone may read it, signed in or not.
type docsPages struct {
	site  *docs.Site
	pages []docsview.Entry
}

func newDocsPages() *docsPages {
	site, err := docs.Load()
	if err != nil {
		panic(err) // embedded: the docs package's tests render every page
	}
	d := &docsPages{site: site}
	// The index first, then the pages in the order the index names them.
	for _, p := range site.Pages() {
		if p.Name == "index" {
			d.pages = append([]docsview.Entry{{Title: "Contents", URL: p.URL()}}, d.pages...)
			continue
		}
		d.pages = append(d.pages, docsview.Entry{Title: p.Title, URL: p.URL()})
	}
	return d
}

func (d *docsPages) showIndex(c *fiber.Ctx) error { return d.show(c, "index") }

func (d *docsPages) showPage(c *fiber.Ctx) error {
	name := strings.TrimSuffix(c.Params("page"), ".md")
	if name == "index" {
		return c.Redirect(docs.URLPrefix, fiber.StatusMovedPermanently)
	}
	return d.show(c, name)
}

func (d *docsPages) show(c *fiber.Ctx, name string) error {
	p := d.site.Page(name)
	if p == nil {
		return catalogueErr(fiber.StatusNotFound, "request.no_docs_page", "Name", name)
	}
	return render(c, fiber.StatusOK, docsview.Page(docsview.Data{
		Title: p.Title, HTML: p.HTML, Pages: d.pages, Current: p.URL(),
	}))
}

// serveImage serves docs/images/FILE, the browser tests' screenshots the
// pages show.
func (d *docsPages) serveImage(c *fiber.Ctx) error {
	file := path.Base(c.Params("file"))
	b, err := docs.Image(file)
	if err != nil {
		return catalogueErr(fiber.StatusNotFound, "notfound.nothing_at", "Path", c.Path())
	}
	c.Set(fiber.HeaderContentType, "image/png")
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.Send(b)
}
