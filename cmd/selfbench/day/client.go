package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// client is one user's way in: a browser-like session (cookies, CSRF,
// a language, an address behind the trusted proxy) and an API token.
type client struct {
	d      *day
	base   string
	http   *http.Client
	token  string
	csrf   string
	lang   string // Accept-Language
	from   string // X-Forwarded-For
	email  string
	passwd string
}

func (d *day) newClient(email, password, token, lang, from string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{d: d, base: "http://" + d.addr, token: token, lang: lang, from: from, email: email, passwd: password,
		http: &http.Client{Jar: jar, Timeout: 90 * time.Second}}
}

// fault names the fault under way, if any.
func (d *day) fault() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case !d.serving:
		return "a server restart"
	case d.pgDown:
		return "the PostgreSQL restart"
	}
	return ""
}

// req is one request; api sends the token, otherwise the session's CSRF
// token goes with every POST.
type req struct {
	method, path string
	body         io.Reader
	ctype        string
	api          bool
}

// do sends r and records its answer; status 0 is no answer.
func (c *client) do(ctx context.Context, r req) (int, []byte) {
	hr, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, r.body)
	if err != nil {
		return 0, nil
	}
	if r.ctype != "" {
		hr.Header.Set("Content-Type", r.ctype)
	}
	hr.Header.Set("Accept-Language", c.lang)
	hr.Header.Set("X-Forwarded-For", c.from)
	if r.api {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	} else if r.method != http.MethodGet {
		hr.Header.Set("X-CSRF-Token", c.csrf)
	}
	fault := c.d.fault()
	res, err := c.http.Do(hr)
	if err != nil {
		if ctx.Err() == nil {
			c.d.rec.noAnswer()
			if fault == "" && c.d.fault() == "" {
				c.d.rec.wrong(fmt.Sprintf("no answer to %s %s: %v", r.method, r.path, err))
			}
		}
		return 0, nil
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if fault == "" {
		fault = c.d.fault()
	}
	c.d.rec.answered(r.method, pathOnly(r.path), res.StatusCode, fault)
	return res.StatusCode, body
}

// pathOnly drops the query, for the list of 5xx answers.
func pathOnly(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p
}

// expect does r and records it as wrong unless its status is one of ok.
func (c *client) expect(ctx context.Context, what string, r req, ok ...int) (int, []byte) {
	status, body := c.do(ctx, r)
	if status == 0 {
		return 0, nil
	}
	for _, s := range ok {
		if status == s {
			return status, body
		}
	}
	if status != http.StatusTooManyRequests && status < 500 {
		c.d.rec.wrong(fmt.Sprintf("%s: %s %s → %d %s", what, r.method, pathOnly(r.path), status, trim(body)))
	}
	return status, body
}

func trim(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// apiJSON is an API call with a JSON body.
func (c *client) apiJSON(ctx context.Context, what, method, path string, v any, ok ...int) (int, []byte) {
	var body io.Reader
	if v != nil {
		b, _ := json.Marshal(v)
		body = bytes.NewReader(b)
	}
	return c.expect(ctx, what, req{method: method, path: path, body: body, ctype: "application/json", api: true}, ok...)
}

// multipartBody is fields then a file part named file.
func multipartBody(fields map[string]string, fileName string, file []byte) (io.Reader, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, _ := w.CreateFormFile("file", fileName)
	_, _ = fw.Write(file)
	_ = w.Close()
	return &b, w.FormDataContentType()
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn signs in as a browser does: the sign-in page for the CSRF
// token, then the form. Afterwards the session's pages carry a CSRF token
// of their own (the same cookie's).
func (c *client) signIn(ctx context.Context) error {
	status, page := c.do(ctx, req{method: http.MethodGet, path: "/signin"})
	m := csrfRE.FindSubmatch(page)
	if status != http.StatusOK || m == nil {
		return fmt.Errorf("sign-in page: %d, csrf token found: %v", status, m != nil)
	}
	c.csrf = string(m[1])
	form := url.Values{"email": {c.email}, "password": {c.passwd}, "_csrf": {c.csrf}}.Encode()
	status, _ = c.do(ctx, req{method: http.MethodPost, path: "/signin", body: strings.NewReader(form), ctype: "application/x-www-form-urlencoded"})
	if status != http.StatusOK {
		return fmt.Errorf("sign in as %s: %d", c.email, status)
	}
	status, page = c.do(ctx, req{method: http.MethodGet, path: "/settings"})
	if m = csrfRE.FindSubmatch(page); status != http.StatusOK || m == nil || !bytes.Contains(page, []byte(`action="/signout"`)) {
		return fmt.Errorf("settings after sign-in as %s: %d", c.email, status)
	}
	c.csrf = string(m[1])
	return nil
}

// form posts a page's form (CSRF in the field and the header).
func (c *client) form(ctx context.Context, what, path string, v url.Values, ok ...int) (int, []byte) {
	v.Set("_csrf", c.csrf)
	return c.expect(ctx, what, req{method: http.MethodPost, path: path, body: strings.NewReader(v.Encode()), ctype: "application/x-www-form-urlencoded"}, ok...)
}
