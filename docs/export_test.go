package docs

import "testing"

// RenderForTest renders Markdown as a page of the tree is rendered.
func RenderForTest(t *testing.T, src string) *Page {
	t.Helper()
	p, err := render("test", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
