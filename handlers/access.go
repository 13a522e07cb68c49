package handlers

import (
	"github.com/gofiber/fiber/v2"
)

// Access says who may use a route. Every route is registered with one,
// beside its entry in the route table; the declaration adds the checks it
// names, and a test walks every route as each kind of caller.
type Access string

const (
	// Anyone: no sign-in (health checks, assets, the sign-in page).
	Anyone Access = "anyone"
	// SignedIn: any signed-in user (a session on pages, a token on the
	// API), on what is theirs to list or create.
	SignedIn Access = "signed-in"
	// Owner: a signed-in user, on one resource of theirs (or one shared
	// with everyone, where sharing exists); administrators may use it on
	// anyone's, and other users are told it does not exist (404).
	Owner Access = "owner"
	// Self: a signed-in user's own resource only (their API tokens);
	// everyone else, administrators too, is told it does not exist.
	Self Access = "self"
	// Admin: administrators only; other users get 403.
	Admin Access = "admin"
)

// Route is a declared route: method, full path and who may use it.
type Route struct {
	Method string
	Path   string
	Access Access
}

// table registers routes on a Fiber router and records each with its
// access, so the declaration and the check are one line.
type table struct {
	routes *[]Route
	router fiber.Router
	prefix string
	// api is true for the token-authenticated JSON API, whose callers get
	// 401/403 answers rather than the sign-in page.
	api bool
}

// group is a sub-table under prefix with the group's own middleware.
func (t table) group(prefix string, mw ...fiber.Handler) table {
	return table{routes: t.routes, router: t.router.Group(prefix, mw...), prefix: t.prefix + prefix, api: t.api}
}

// add registers handlers for the methods and path, preceded by the checks
// that access calls for.
func (t table) add(methods []string, path string, access Access, handlers ...fiber.Handler) {
	var checks []fiber.Handler
	switch {
	case access == Anyone:
	case t.api && access == Admin:
		// The API group has already required a token.
		checks = []fiber.Handler{requireAPIAdmin}
	case t.api:
	case access == Admin:
		checks = []fiber.Handler{requireUser, requireAdmin}
	default:
		checks = []fiber.Handler{requireUser}
	}
	all := append(checks, handlers...)
	for _, m := range methods {
		t.router.Add(m, path, all...)
		*t.routes = append(*t.routes, Route{Method: m, Path: t.prefix + path, Access: access})
	}
}

// get also answers HEAD, as Fiber's own Get does.
func (t table) get(path string, a Access, h ...fiber.Handler) {
	t.add([]string{fiber.MethodHead, fiber.MethodGet}, path, a, h...)
}
func (t table) post(path string, a Access, h ...fiber.Handler) {
	t.add([]string{fiber.MethodPost}, path, a, h...)
}
func (t table) put(path string, a Access, h ...fiber.Handler) {
	t.add([]string{fiber.MethodPut}, path, a, h...)
}
func (t table) patch(path string, a Access, h ...fiber.Handler) {
	t.add([]string{fiber.MethodPatch}, path, a, h...)
}
func (t table) delete(path string, a Access, h ...fiber.Handler) {
	t.add([]string{fiber.MethodDelete}, path, a, h...)
}

// all registers every method, as Fiber's All does.
func (t table) all(path string, a Access, h ...fiber.Handler) {
	t.add([]string{fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete,
		fiber.MethodConnect, fiber.MethodOptions, fiber.MethodTrace, fiber.MethodPatch}, path, a, h...)
}
