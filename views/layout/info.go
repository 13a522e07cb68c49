// Package layout holds the page shell every page is rendered in, and the
// per-request facts the shell needs (signed-in user, CSRF token, flashes).
package layout

import (
	"context"

	"github.com/ruckus/ruckus/app/store"
)

// Flash is a one-time message shown at the top of the next page.
type Flash struct {
	Kind    string // "info" or "error"
	Message string
}

// Info is what the layout needs to know about the request.
type Info struct {
	User      *store.User
	CSRFToken string
	Flashes   []Flash
	Path      string
	Version   string
	AssetURL  func(name string) string
}

type infoKey struct{}

// WithInfo stores the request's Info in ctx.
func WithInfo(ctx context.Context, i *Info) context.Context {
	return context.WithValue(ctx, infoKey{}, i)
}

// InfoFrom returns the request's Info; an empty one when there is none.
func InfoFrom(ctx context.Context) *Info {
	if i, ok := ctx.Value(infoKey{}).(*Info); ok {
		return i
	}
	return &Info{AssetURL: func(string) string { return "" }}
}

// IsAdmin reports whether the signed-in user is an admin.
func (i *Info) IsAdmin() bool { return i.User != nil && i.User.IsAdmin() }

func (i *Info) current(prefix string) string {
	if i.Path == prefix || (prefix != "/" && len(i.Path) > len(prefix) && i.Path[:len(prefix)+1] == prefix+"/") {
		return "page"
	}
	return ""
}

// HasInfo reports whether ctx carries the request's Info yet.
func HasInfo(ctx context.Context) bool {
	_, ok := ctx.Value(infoKey{}).(*Info)
	return ok
}
