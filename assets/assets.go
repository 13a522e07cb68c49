// Package assets embeds the vendored front-end files (htmx, Pico CSS) and
// Ruckus's own stylesheet, and serves them under content-hashed names so
// browsers may cache them forever and still see every change.
package assets

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"strings"
)

//go:embed *.js *.css
var files embed.FS

// Prefix is the URL path the assets are served under.
const Prefix = "/assets/"

// Asset is one file with its hashed URL.
type Asset struct {
	Name        string
	URL         string
	ContentType string
	Body        []byte
}

// Manifest maps file names to hashed URLs and back. It is immutable once
// built.
type Manifest struct {
	byName map[string]*Asset
	byURL  map[string]*Asset
}

// New hashes every embedded file.
func New() (*Manifest, error) {
	m := &Manifest{byName: map[string]*Asset{}, byURL: map[string]*Asset{}}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(p)
		a := &Asset{
			Name:        p,
			URL:         Prefix + strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:])[:10] + ext,
			ContentType: mime.TypeByExtension(ext),
			Body:        body,
		}
		m.byName[p] = a
		m.byURL[a.URL] = a
		return nil
	})
	return m, err
}

// URL is the cache-busted URL of the named file. Asking for a file that is
// not embedded is a programming error, caught by the view tests.
func (m *Manifest) URL(name string) string {
	a, ok := m.byName[name]
	if !ok {
		panic(fmt.Sprintf("assets: no embedded file %q", name))
	}
	return a.URL
}

// Body is the content of the named file (for a page that must carry its
// styles inline, such as a report saved to disk).
func (m *Manifest) Body(name string) []byte {
	a, ok := m.byName[name]
	if !ok {
		panic(fmt.Sprintf("assets: no embedded file %q", name))
	}
	return a.Body
}

// Lookup finds the asset served at a hashed URL.
func (m *Manifest) Lookup(url string) (*Asset, bool) {
	a, ok := m.byURL[url]
	return a, ok
}
