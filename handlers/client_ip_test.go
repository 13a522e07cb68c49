package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/handlers"
)

// Behind a trusted reverse proxy the sign-in limiter counts failures per
// client (the right-most X-Forwarded-For entry the proxy wrote), so one
// client's failures do not lock everyone out; from an untrusted peer the
// header is ignored, so a client cannot dodge the limit by inventing one.
func TestSignInLimiterKeysOnTheClientBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	attempt := func(e *env, c *client, xff, password string) int {
		t.Helper()
		return signIn(c, password, xff)
	}
	// app.Test's connections come from 0.0.0.0: that is the proxy here.
	proxy, err := handlers.ParseTrustedProxies("0.0.0.0, 10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(d *handlers.Deps) { d.TrustedProxies = proxy }) // 5 failures a minute
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	mallory, ada := e.client(), e.client()
	mallory.get("/signin")
	ada.get("/signin")
	for i := range 5 {
		// Mallory writes a different left-most address each time; the
		// proxy (and a second one, 10.1.2.3) appended the real one.
		if st := attempt(e, mallory, "198.51.100."+string(rune('1'+i))+", 203.0.113.66, 10.1.2.3", "wrong"); st != 401 {
			t.Fatalf("mallory's attempt %d: %d, want 401", i+1, st)
		}
	}
	if st := attempt(e, mallory, "203.0.113.66", "correct horse"); st != 429 {
		t.Errorf("mallory's sixth attempt: %d, want 429", st)
	}
	if st := attempt(e, ada, "192.0.2.7", "correct horse"); st != 303 {
		t.Errorf("another client behind the same proxy: %d, want 303 (signed in)", st)
	}

	// Without trusted proxies the header counts for nothing.
	e2 := newEnv(t)
	e2.createUser("ada@example.com", "correct horse", store.RoleUser)
	m2, a2 := e2.client(), e2.client()
	m2.get("/signin")
	a2.get("/signin")
	for i := range 5 {
		if st := attempt(e2, m2, "198.51.100."+string(rune('1'+i)), "wrong"); st != 401 {
			t.Fatalf("attempt %d: %d", i+1, st)
		}
	}
	if st := attempt(e2, a2, "192.0.2.7", "correct horse"); st != 429 {
		t.Errorf("a made-up X-Forwarded-For from an untrusted peer escaped the limit: %d, want 429", st)
	}
}

// signIn posts the sign-in form with one X-Forwarded-For line per entry of
// xff (none when empty), in order.
func signIn(c *client, password string, xff ...string) int {
	form := url.Values{"email": {"ada@example.com"}, "password": {password}, "_csrf": {c.csrf}}
	req := httptest.NewRequest(http.MethodPost, "/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, line := range xff {
		if line != "" {
			req.Header.Add("X-Forwarded-For", line)
		}
	}
	return c.do(req).status
}

// A client may send an X-Forwarded-For line of its own, which a proxy that
// appends its entry as a second line leaves in front: the limiter reads
// every line, and keys on the right-most untrusted address across them,
// so changing its own line each time does not get the client past it.
func TestSignInLimiterReadsEveryForwardedLine(t *testing.T) {
	t.Parallel()
	proxy, err := handlers.ParseTrustedProxies("0.0.0.0, 10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(d *handlers.Deps) { d.TrustedProxies = proxy }) // 5 failures a minute
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	mallory, ada := e.client(), e.client()
	mallory.get("/signin")
	ada.get("/signin")
	for i := range 5 {
		// Mallory's own line, a new address each time; the outer proxy's
		// line with the real address; an inner trusted proxy's line.
		own := "192.0.2.200, 198.51.100." + string(rune('1'+i))
		if st := signIn(mallory, "wrong", own, "203.0.113.66", "10.1.2.3"); st != 401 {
			t.Fatalf("mallory's attempt %d: %d, want 401", i+1, st)
		}
	}
	if st := signIn(mallory, "correct horse", "198.51.100.99", "203.0.113.66"); st != 429 {
		t.Errorf("mallory's sixth attempt with a line of her own: %d, want 429", st)
	}
	if st := signIn(ada, "correct horse", "203.0.113.66, 192.0.2.7"); st != 303 {
		t.Errorf("another client behind the same proxies: %d, want 303 (signed in)", st)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := handlers.ParseTrustedProxies(" 10.0.0.0/8, 127.0.0.1 ,::1, ::ffff:192.0.2.1,")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("192.0.2.1/32")}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %v, want %v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "1.2.3"} {
		if _, err := handlers.ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseTrustedProxies: any input is either refused or read as valid
// prefixes that read back the same from their own text.
func FuzzParseTrustedProxies(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8, 127.0.0.1", "::1", "", ",,", "::ffff:10.0.0.1/104", "300.1.1.1", "fe80::1%eth0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := handlers.ParseTrustedProxies(list)
		if err != nil {
			return
		}
		var text []string
		for _, p := range got {
			if !p.IsValid() || p.Masked() != p {
				t.Fatalf("%q: prefix %v is not valid and masked", list, p)
			}
			text = append(text, p.String())
		}
		again, err := handlers.ParseTrustedProxies(strings.Join(text, ","))
		if err != nil || len(again) != len(got) {
			t.Fatalf("%q read as %v; its text reads as %v, %v", list, got, again, err)
		}
		for i := range got {
			if again[i] != got[i] {
				t.Fatalf("%q: %v reads back as %v", list, got[i], again[i])
			}
		}
	})
}
