package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/handlers"
)

// apiHeader calls GET path with token and returns the status and one
// header of the answer.
func apiHeader(t *testing.T, e *env, path, token, header string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get(header)
}

// apiStatus is apiHeader's status and Retry-After.
func apiStatus(t *testing.T, e *env, path, token string) (int, string) {
	t.Helper()
	return apiHeader(t, e, path, token, "Retry-After")
}

// A token gets its own limit per window, and all of a user's tokens
// together the user's; over either the API answers 429 with Retry-After,
// and another user, the pages and the next window are not affected.
func TestAPIRateLimitsPerTokenAndPerUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *handlers.Deps) {
		d.APIRatePerToken, d.APIRatePerUser, d.APIRateWindow = 3, 5, 10*time.Second
	})
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	first, second := e.token(ada), e.token(ada)
	bob := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))

	for i := range 3 {
		if code, _ := apiStatus(t, e, "/api/v1/me", first); code != 200 {
			t.Fatalf("request %d of 3 on a token: %d", i+1, code)
		}
	}
	code, retry := apiStatus(t, e, "/api/v1/me", first)
	if secs, err := strconv.Atoi(retry); code != 429 || err != nil || secs < 1 || secs > 10 {
		t.Fatalf("the 4th request on a token allowed 3: %d, Retry-After %q", code, retry)
	}
	r := e.api(http.MethodGet, "/api/v1/datasets", first, nil, "")
	if r.status != 429 || !strings.Contains(r.body["error"].(string), "at most 3 per token and 5 per user every 10s") {
		t.Fatalf("429's message: %v", r.body)
	}
	// ada's second token has its own 3, but ada as a whole has 5, of
	// which 3 are used (refused requests are not counted).
	for i := range 2 {
		if code, _ := apiStatus(t, e, "/api/v1/me", second); code != 200 {
			t.Fatalf("request %d on ada's second token: %d", i+1, code)
		}
	}
	if code, retry := apiStatus(t, e, "/api/v1/me", second); code != 429 || retry == "" {
		t.Fatalf("ada's second token past ada's limit: %d %q", code, retry)
	}
	// bob is not limited by ada's use; ada's pages are not limited at all.
	if code, _ := apiStatus(t, e, "/api/v1/me", bob); code != 200 {
		t.Fatalf("bob: %d", code)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if page := c.get("/settings"); page.status != 200 || page.text(`[data-testid="api-limits"]`) !=
		"API requests are limited to at most 3 per token and 5 per user every 10s; past that the API answers 429 with Retry-After." {
		t.Fatalf("ada's settings page while her API is limited: %d %q", page.status, page.text(`[data-testid="api-limits"]`))
	}
	// The next window lets ada in again. (The window is long enough that
	// a loaded machine's first four requests fall within one.)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if code, _ := apiStatus(t, e, "/api/v1/me", second); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still limited after the window passed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// No limits set: none applied.
	off := newEnv(t)
	tok := off.token(off.createUser("cy@example.com", "correct horse", store.RoleUser))
	for i := range 50 {
		if code, _ := apiStatus(t, off, "/api/v1/me", tok); code != 200 {
			t.Fatalf("request %d without limits: %d", i+1, code)
		}
	}
}
