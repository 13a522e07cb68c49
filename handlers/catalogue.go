package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/i18n"
)

// catalogueError is an error a person reads: a page shows it in the
// reader's language, the JSON API in English (machines read it). Its key
// names the message in the catalogue (app/i18n), its args fill the
// placeholders.
type catalogueError struct {
	status int
	key    string
	args   []any
}

func (e *catalogueError) Error() string {
	return i18n.Default().Lang(i18n.Languages[0].Code).T(e.key, e.args...)
}

// catalogueErr returns an error answered with status and the catalogue's
// message key, its placeholders filled from args given as name/value pairs:
// catalogueErr(409, "bench.still_active", "Name", b.Name).
func catalogueErr(status int, key string, args ...any) error {
	return &catalogueError{status: status, key: key, args: args}
}

// catalogueMessage is the text and status of a catalogueError in err, in the
// caller's language for a page and in English for the API.
func catalogueMessage(c *fiber.Ctx, err error) (status int, msg string, ok bool) {
	var ce *catalogueError
	if !errors.As(err, &ce) {
		return 0, "", false
	}
	if isAPI(c) {
		return ce.status, ce.Error(), true
	}
	return ce.status, i18n.T(c.UserContext(), ce.key, ce.args...), true
}

// flashKey flashes the catalogue's message key, in the reader's language, on
// the next page: s.flashKey(c, "info", "models.saved", "Name", name).
func (s *server) flashKey(c *fiber.Ctx, kind, key string, args ...any) error {
	return s.flash(c, kind, i18n.T(c.UserContext(), key, args...))
}

// nounKeys are the catalogue's "there is no such …" sentence for each noun
// a lookup names (lookup, noSuch, idParam).
var nounKeys = map[string]string{
	"active token":     "notfound.active_token",
	"agent":            "notfound.agent",
	"benchmark":        "notfound.benchmark",
	"benchmark or run": "notfound.benchmark_or_run",
	"dataset":          "notfound.dataset",
	"fleet":            "notfound.fleet",
	"hardware profile": "notfound.hardware_profile",
	"item":             "notfound.item",
	"model":            "notfound.model",
	"price":            "notfound.price",
	"result":           "notfound.result",
	"run":              "notfound.run",
	"token":            "notfound.token",
	"user":             "notfound.user",
	"webhook":          "notfound.webhook",
}
