package handlers

import (
	"cmp"
	"context"
	"errors"
	"github.com/ruckus/ruckus/app/i18n"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/layout"
)

const (
	sessionCookie = "ruckus_session"
	csrfCookie    = "ruckus_csrf"
	flashCookie   = "ruckus_flash"
	csrfField     = "_csrf"
	csrfHeader    = "X-CSRF-Token"

	localSession = "session"
	localUser    = "user"
)

// Default request deadlines: a page or API call, and an upload (as long as
// fasthttp's read timeout allows the body to take).
const (
	defaultRequestTimeout = 60 * time.Second
	defaultUploadTimeout  = 30 * time.Minute
)

// logRequests gives the request its deadline, runs it and logs it. A query
// of a client that has gone (or of a request that takes too long) stops at
// the deadline instead of holding a pooled connection.
func (s *server) logRequests(c *fiber.Ctx) error {
	start := time.Now()
	limit := cmp.Or(s.RequestTimeout, defaultRequestTimeout)
	if isUpload(c) {
		limit = cmp.Or(s.UploadTimeout, defaultUploadTimeout)
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), limit)
	defer cancel()
	c.SetUserContext(ctx)
	err := c.Next()
	if err != nil {
		// Let the error handler write the response now, so the log line
		// carries the status the client really gets.
		if herr := s.handleError(c, err); herr != nil {
			s.Logger.Error("error handler failed", "err", herr)
		}
	}
	level := slog.LevelInfo
	status := c.Response().StatusCode()
	if status >= 500 {
		level = slog.LevelError
	}
	// A streamed body (an export) has no length yet, and Body() would
	// read the whole stream into memory: log -1 for it.
	size := -1
	if !c.Response().IsBodyStream() {
		size = len(c.Response().Body())
	}
	if s.ObserveRequest != nil {
		s.ObserveRequest(routePattern(c), c.Method(), status, time.Since(start))
	}
	s.Logger.Log(c.UserContext(), level, "request",
		"method", c.Method(), "path", c.Path(), "status", status,
		"duration_ms", float64(time.Since(start).Microseconds())/1000,
		"bytes", size, "ip", s.clientIP(c))
	return nil
}

// routePattern is the route table's pattern the request was answered by,
// such as /runs/:id<int>; "unmatched" when none but a catch-all answered,
// so that a metric's series are the routes, never what clients send.
func routePattern(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || r.Path == "" || r.Path == "/" && c.Path() != "/" || r.Path == "/api/v1" {
		return "unmatched"
	}
	return r.Path
}

func securityHeaders(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'self'")
	return c.Next()
}

// isUpload reports whether the request is a dataset upload, the one kind
// of request whose body may exceed MaxRequestBytes.
func isUpload(c *fiber.Ctx) bool {
	return c.Method() == fiber.MethodPost && (c.Path() == "/datasets" || c.Path() == "/api/v1/datasets" || isImport(c.Path()))
}

// isImport matches /api/v1/datasets/{id}/imports and the page's
// /datasets/{id}/imports: uploads of results.
func isImport(path string) bool {
	rest, ok := strings.CutPrefix(path, "/api/v1/datasets/")
	if !ok {
		rest, ok = strings.CutPrefix(path, "/datasets/")
	}
	return ok && strings.HasSuffix(rest, "/imports") && strings.Count(rest, "/") == 1
}

// limitBody refuses bodies over MaxRequestBytes outside uploads. Bodies
// stream (see New), so fasthttp's own limit no longer applies; chunked
// bodies of unknown length are refused for the same reason.
func (s *server) limitBody(c *fiber.Ctx) error {
	if isUpload(c) {
		return c.Next()
	}
	n := c.Request().Header.ContentLength()
	if n > int(s.MaxRequestBytes) {
		return catalogueErr(fiber.StatusRequestEntityTooLarge, "request.too_large")
	}
	if n == -1 {
		return catalogueErr(fiber.StatusLengthRequired, "request.length_required")
	}
	return c.Next()
}

// httpRequest builds the net/http view of the request that gorilla/sessions
// needs: headers (cookies), address and context, but not the body, which
// must stay a stream for uploads (adaptor.ConvertRequest would read it
// whole).
func httpRequest(c *fiber.Ctx) (*http.Request, error) {
	r, err := http.NewRequestWithContext(c.UserContext(), c.Method(), c.OriginalURL(), nil)
	if err != nil {
		return nil, err
	}
	c.Request().Header.VisitAll(func(k, v []byte) {
		r.Header.Add(string(k), string(v))
	})
	r.RemoteAddr = c.Context().RemoteAddr().String()
	return r, nil
}

// cookieWriter is the http.ResponseWriter gorilla/sessions writes to; only
// the Set-Cookie headers it produces are copied onto the Fiber response.
type cookieWriter struct {
	header http.Header
}

func (w *cookieWriter) Header() http.Header         { return w.header }
func (w *cookieWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *cookieWriter) WriteHeader(int)             {}

func (w *cookieWriter) copyTo(c *fiber.Ctx) {
	for _, v := range w.header.Values("Set-Cookie") {
		c.Response().Header.Add("Set-Cookie", v)
	}
}

// saveSession writes a gorilla session (store row or flash cookie) and
// copies its cookie onto the response.
func saveSession(c *fiber.Ctx, sess *sessions.Session) error {
	r, err := httpRequest(c)
	if err != nil {
		return err
	}
	sess.Options.Secure = c.Protocol() == "https"
	w := &cookieWriter{header: http.Header{}}
	if err := sess.Save(r, w); err != nil {
		return err
	}
	w.copyTo(c)
	return nil
}

// loadSession reads the session cookie, the CSRF cookie and pending
// flashes, and puts the user and the layout's Info in the request context.
// A bad, expired or revoked session just means nobody is signed in.
func (s *server) loadSession(c *fiber.Ctx) error {
	r, err := httpRequest(c)
	if err != nil {
		return err
	}
	sess, err := s.sessions.New(r, sessionCookie)
	if err != nil {
		return err
	}
	info := &layout.Info{
		Path:     c.Path(),
		Version:  s.Version,
		AssetURL: s.Assets.URL,
	}
	c.Locals(localSession, sess)
	if u, ok := auth.SessionUser(sess); ok && !u.Disabled() {
		info.User = &u
		c.Locals(localUser, &u)
	}
	info.CSRFToken = s.csrfToken(c)
	if c.Method() == fiber.MethodGet && c.Get("HX-Request") == "" {
		if err := s.takeFlashes(c, r, info); err != nil {
			return err
		}
	}
	c.SetUserContext(i18n.With(layout.WithInfo(c.UserContext(), info), pickLanguage(c, info.User)))
	return c.Next()
}

// pickLanguage is the request's interface language: the user's setting,
// else the browser's Accept-Language, else English.
func pickLanguage(c *fiber.Ctx, u *store.User) *i18n.Localizer {
	setting := ""
	if u != nil {
		setting = u.Language
	}
	return i18n.Default().For(setting, c.Get(fiber.HeaderAcceptLanguage))
}

// csrfToken returns the visitor's CSRF token from its signed cookie,
// minting one (and the cookie) when there is none or it does not verify.
func (s *server) csrfToken(c *fiber.Ctx) string {
	var token string
	if raw := c.Cookies(csrfCookie); raw != "" {
		if s.csrf.Decode(csrfCookie, raw, &token) == nil && token != "" {
			return token
		}
	}
	return s.newCSRFToken(c)
}

func (s *server) newCSRFToken(c *fiber.Ctx) string {
	token := auth.RandomString(32)
	encoded, err := s.csrf.Encode(csrfCookie, token)
	if err != nil {
		return token
	}
	c.Cookie(&fiber.Cookie{
		Name: csrfCookie, Value: encoded, Path: "/", HTTPOnly: true, SameSite: "Lax",
		Secure: c.Protocol() == "https",
	})
	return token
}

// checkCSRF refuses state-changing requests whose form field or header
// does not match the visitor's CSRF cookie.
func (s *server) checkCSRF(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	if strings.HasPrefix(c.Path(), "/admin/jobs/") {
		// River's UI is a separate application that cannot carry our token;
		// its writes must at least come from this site's own pages.
		if origin := c.Get(fiber.HeaderOrigin); origin == "" || origin != c.BaseURL() {
			return catalogueErr(fiber.StatusForbidden, "request.cross_site")
		}
		return c.Next()
	}
	want := layout.InfoFrom(c.UserContext()).CSRFToken
	got := c.Get(csrfHeader)
	if got == "" && isUpload(c) {
		// A multipart body is streamed, not parsed up front: the upload
		// forms put their token in the first part, which the upload
		// reader checks (checkUploadCSRF) before it reads anything else.
		// Never from the query string, where a link could carry it.
		c.Locals(csrfBodyKey, want)
		return c.Next()
	} else if got == "" {
		got = bodyFormValue(c, csrfField)
	}
	// want came from the signed cookie; when the cookie was missing or
	// forged it is freshly minted and no form can know it.
	if got == "" || !auth.Equal(got, want) {
		return catalogueErr(fiber.StatusForbidden, "request.form_expired")
	}
	return c.Next()
}

// bodyFormValue reads a field of a urlencoded or multipart form body only
// (fiber's FormValue also looks in the query string).
func bodyFormValue(c *fiber.Ctx, key string) string {
	if v := c.Request().PostArgs().Peek(key); len(v) > 0 {
		return string(v)
	}
	if strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEMultipartForm) {
		if mf, err := c.MultipartForm(); err == nil && len(mf.Value[key]) > 0 {
			return mf.Value[key][0]
		}
	}
	return ""
}

// csrfBodyKey is the Locals key under which checkCSRF leaves the token an
// upload's first multipart part must carry.
const csrfBodyKey = "ruckus.csrf.body"

// maxCSRFPart bounds the token part read from an upload.
const maxCSRFPart = 256

// checkUploadCSRF reads the first part of a streamed upload from a page
// (not the API, whose tokens need no CSRF check) and refuses the request
// unless it is the form's CSRF field with the visitor's token.
func checkUploadCSRF(c *fiber.Ctx, mr *multipart.Reader) error {
	want, ok := c.Locals(csrfBodyKey).(string)
	if !ok {
		return nil
	}
	refused := catalogueErr(fiber.StatusForbidden, "request.form_expired")
	p, err := mr.NextPart()
	if err != nil || p.FormName() != csrfField {
		return refused
	}
	got, err := io.ReadAll(io.LimitReader(p, maxCSRFPart+1))
	if err != nil || len(got) > maxCSRFPart || want == "" || !auth.Equal(string(got), want) {
		return refused
	}
	return nil
}

func (s *server) takeFlashes(c *fiber.Ctx, r *http.Request, info *layout.Info) error {
	if c.Cookies(flashCookie) == "" {
		return nil
	}
	fs, _ := s.flashes.Get(r, flashCookie)
	for _, f := range fs.Flashes() {
		if v, ok := f.(string); ok {
			kind, msg, _ := strings.Cut(v, ":")
			info.Flashes = append(info.Flashes, layout.Flash{Kind: kind, Message: msg})
		}
	}
	fs.Options.MaxAge = -1
	return saveSession(c, fs)
}

// flash queues a message for the next page the visitor sees.
func (s *server) flash(c *fiber.Ctx, kind, msg string) error {
	r, err := httpRequest(c)
	if err != nil {
		return err
	}
	fs, _ := s.flashes.Get(r, flashCookie)
	fs.AddFlash(kind + ":" + msg)
	return saveSession(c, fs)
}

func currentUser(c *fiber.Ctx) *store.User {
	u, _ := c.Locals(localUser).(*store.User)
	return u
}

func currentSession(c *fiber.Ctx) *sessions.Session {
	sess, _ := c.Locals(localSession).(*sessions.Session)
	return sess
}

// requireUser sends visitors who are not signed in to the sign-in page,
// remembering where they were going.
func requireUser(c *fiber.Ctx) error {
	if currentUser(c) != nil {
		return c.Next()
	}
	target := "/signin"
	if c.Method() == fiber.MethodGet && c.Get("HX-Request") == "" {
		target += "?next=" + url.QueryEscape(string(c.Request().URI().RequestURI()))
	}
	return redirect(c, target)
}

func requireAdmin(c *fiber.Ctx) error {
	if u := currentUser(c); u != nil && u.IsAdmin() {
		return c.Next()
	}
	return catalogueErr(fiber.StatusForbidden, "request.admins_only")
}

// redirect answers with a 303, or HX-Redirect for htmx requests so the
// whole page moves rather than a fragment being swapped for the target.
func redirect(c *fiber.Ctx, to string) error {
	if c.Get("HX-Request") != "" {
		c.Set("HX-Redirect", to)
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// requireToken authenticates API calls by bearer token.
// An address that sent too many invalid tokens is refused before any
// lookup (refuseBadTokens); a missing token costs none.
func (s *server) requireToken(c *fiber.Ctx) error {
	token, ok := bearerToken(c)
	if !ok {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="ruckus"`)
		return fiber.NewError(fiber.StatusUnauthorized, "missing API token: send Authorization: Bearer <token>")
	}
	if err := s.refuseBadTokens(c); err != nil {
		return err
	}
	u, err := s.Store.UserByAPIToken(c.UserContext(), auth.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		s.countBadToken(c)
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="ruckus", error="invalid_token"`)
		return fiber.NewError(fiber.StatusUnauthorized, "invalid or revoked API token")
	}
	if err != nil {
		return err
	}
	c.Locals(localUser, &u)
	return c.Next()
}

// bearerToken is the request's API token (Authorization: Bearer), trimmed.
func bearerToken(c *fiber.Ctx) (string, bool) {
	token, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	token = strings.TrimSpace(token)
	return token, ok && token != ""
}

func requireAPIAdmin(c *fiber.Ctx) error {
	if u := currentUser(c); u != nil && u.IsAdmin() {
		return c.Next()
	}
	return fiber.NewError(fiber.StatusForbidden, "this endpoint is for administrators")
}

// safeNext keeps a post-sign-in redirect on this site.
// Control characters and backslashes are refused outright: browsers drop
// tabs and newlines ("/\t/evil" becomes "//evil") and fasthttp would copy
// them into the Location header.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	for i := 0; i < len(next); i++ {
		if next[i] < 0x20 || next[i] == 0x7f || next[i] == '\\' {
			return "/"
		}
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
