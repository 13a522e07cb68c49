package handlers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Requests with invalid bearer tokens are each a database lookup: one
// address gets a window's worth answered 401, then 429 with Retry-After
// and no lookup, however many it sends; a request without a token costs
// no lookup and is not counted.
func TestInvalidTokensAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for range 50 {
		if r := e.api(http.MethodGet, "/api/v1/me", "", nil, ""); r.status != http.StatusUnauthorized {
			t.Fatalf("without a token: %d", r.status)
		}
	}
	unauthorized, limited := 0, 0
	for i := range 2000 {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
		req.Header.Set("Authorization", fmt.Sprintf("Bearer rk_guess%d", i))
		res, err := e.app.App.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		switch res.StatusCode {
		case http.StatusUnauthorized:
			unauthorized++
		case http.StatusTooManyRequests:
			limited++
			if res.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		default:
			t.Fatalf("invalid token %d: %d", i, res.StatusCode)
		}
	}
	if unauthorized != 30 || limited != 1970 {
		t.Fatalf("2,000 invalid tokens: %d answered 401 (looked up), %d 429; want 30 and 1970", unauthorized, limited)
	}
	// The API's contract holds for the refusal too.
	if r := e.api(http.MethodGet, "/api/v1/me", "rk_one-more", nil, ""); r.status != http.StatusTooManyRequests || r.body["error"] == nil {
		t.Fatalf("a further invalid token: %d %v", r.status, r.body)
	}
}
