package handlers

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/layout"
)

// render writes a templ component as the HTML response: the one helper for
// every page and fragment.
func render(c *fiber.Ctx, status int, component templ.Component) error {
	c.Type("html", "utf-8")
	c.Status(status)
	return component.Render(c.UserContext(), c.Response().BodyWriter())
}

// unavailableRetrySeconds is the Retry-After of a 503 while the database
// is away: about what a PostgreSQL restart takes.
const unavailableRetrySeconds = 5

func isAPI(c *fiber.Ctx) bool { return strings.HasPrefix(c.Path(), "/api/") }

// handleError turns an error into the response: JSON for the API, a page in
// the layout otherwise. Details of unexpected errors go to the log only.
func (s *server) handleError(c *fiber.Ctx, err error) error {
	status := fiber.StatusInternalServerError
	msg := i18n.T(c.UserContext(), "error.server_message")
	var fe *fiber.Error
	st, worded, ok := catalogueMessage(c, err)
	switch {
	case ok:
		status, msg = st, worded
	case errors.As(err, &fe):
		status = fe.Code
		msg = fe.Message
		if status == fiber.StatusRequestEntityTooLarge {
			msg = i18n.T(c.UserContext(), "error.too_large_message")
		}
	case errors.Is(err, store.ErrNotFound):
		status = fiber.StatusNotFound
		msg = notFoundMessage(c, err)
	case store.IsBusy(err):
		// A row the change needs is held elsewhere (an agent may hold its
		// run's): nothing changed, and waiting longer would tie up a
		// connection every other request needs.
		status, msg = fiber.StatusConflict, i18n.T(c.UserContext(), "error.busy_message")
		if isAPI(c) {
			msg = store.ErrBusy.Error()
		}
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(store.RowLockTimeout.Seconds()))))
	case store.IsUnavailable(err):
		// PostgreSQL is restarting or out of reach: nothing about the
		// request is wrong, and it may be sent again shortly.
		s.Logger.Warn("database unavailable", "method", c.Method(), "path", c.Path(), "err", err)
		status, msg = fiber.StatusServiceUnavailable, i18n.T(c.UserContext(), "error.unavailable_message")
		if isAPI(c) {
			msg = "the database is unavailable; try again in a few seconds"
		}
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(unavailableRetrySeconds))
	default:
		s.Logger.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	c.Response().ResetBody()
	if isAPI(c) {
		if status == fiber.StatusInternalServerError {
			msg = "internal error"
		}
		return c.Status(status).JSON(apiError{Error: msg})
	}
	if !layout.HasInfo(c.UserContext()) {
		// Errors raised before loadSession ran still get styled pages, in
		// the browser's language.
		ctx := layout.WithInfo(c.UserContext(), &layout.Info{Path: c.Path(), Version: s.Version, AssetURL: s.Assets.URL})
		c.SetUserContext(i18n.With(ctx, pickLanguage(c, nil)))
	}
	key := map[int]string{
		fiber.StatusNotFound:              "error.not_found",
		fiber.StatusForbidden:             "error.forbidden",
		fiber.StatusRequestEntityTooLarge: "error.too_large",
		fiber.StatusTooManyRequests:       "error.too_many",
	}[status]
	if store.IsBusy(err) {
		key = "error.busy"
	}
	if status == fiber.StatusServiceUnavailable {
		key = "error.unavailable"
	}
	if key == "" {
		key = "error.error"
		if status >= 500 {
			key = "error.server"
		}
	}
	title := i18n.T(c.UserContext(), key)
	return render(c, status, layout.ErrorPage(status, title, msg))
}

// missing names what a lookup was for, so that handleError can answer a
// store.ErrNotFound with a 404 that says what is missing.
type missing struct {
	noun string
	// detail says why nothing could match, when the request itself
	// cannot name one (an id that is no id); nil otherwise.
	detail error
	err    error
}

func (e *missing) Error() string { return e.noun + ": " + e.err.Error() }
func (e *missing) Unwrap() error { return e.err }

// lookup names the noun a store call's error is about: a store.ErrNotFound
// becomes "no such <noun>" in handleError, any other error stays what it
// is. nil stays nil.
func lookup(noun string, err error) error {
	if err == nil {
		return nil
	}
	return &missing{noun: noun, err: err}
}

// noSuch is a 404 for a request that cannot name any noun, saying why.
func noSuch(noun string, detail error) error {
	return &missing{noun: noun, detail: detail, err: store.ErrNotFound}
}

// notFoundMessage words a store.ErrNotFound for the caller: "no such run"
// in the API, "There is no such run." on a page, in the reader's language.
func notFoundMessage(c *fiber.Ctx, err error) string {
	var m *missing
	if !errors.As(err, &m) {
		if isAPI(c) {
			return "not found: " + c.Path()
		}
		return i18n.T(c.UserContext(), "notfound.nothing_at", "Path", c.Path())
	}
	if isAPI(c) {
		msg := "no such " + m.noun
		if m.detail != nil {
			msg += ": " + m.detail.Error()
		}
		return msg
	}
	key, ok := nounKeys[m.noun]
	if !ok {
		key = "notfound.thing"
	}
	msg := i18n.T(c.UserContext(), key, "Noun", m.noun)
	if m.detail != nil {
		msg = i18n.T(c.UserContext(), "notfound.with_detail", "Message", msg, "Detail", i18n.ErrorText(c.UserContext(), m.detail))
	}
	return msg
}

func (s *server) notFound(c *fiber.Ctx) error {
	return catalogueErr(fiber.StatusNotFound, "notfound.nothing_at", "Path", c.Path())
}

func apiNotFound(c *fiber.Ctx) error {
	return fiber.NewError(fiber.StatusNotFound, "no such endpoint: "+c.Method()+" "+c.Path())
}

func (s *server) serveAsset(c *fiber.Ctx) error {
	a, ok := s.Assets.Lookup(c.Path())
	if !ok {
		return catalogueErr(fiber.StatusNotFound, "notfound.nothing_at", "Path", c.Path())
	}
	c.Set(fiber.HeaderContentType, a.ContentType)
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	return c.Send(a.Body)
}

func (s *server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok", "version": s.Version})
}

func (s *server) readyz(c *fiber.Ctx) error {
	if err := s.Ready(c.UserContext()); err != nil {
		// Anyone may ask: the answer says what is wrong in general terms,
		// the detail (the database's user, name and address in a driver's
		// message) goes to the log only.
		s.Logger.Warn("not ready", "err", err)
		reason := "not ready"
		var nr *NotReady
		if errors.As(err, &nr) {
			reason = nr.Reason
		}
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "error": reason})
	}
	return c.JSON(fiber.Map{"status": "ready"})
}

// NotReady is why the server cannot serve yet: Reason is shown to anyone
// who asks /readyz, Err (which may name the database's user, name and
// address) only in the log.
type NotReady struct {
	Reason string
	Err    error
}

func (e *NotReady) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}

func (e *NotReady) Unwrap() error { return e.Err }
