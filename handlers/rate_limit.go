package handlers

import (
	"cmp"
	"fmt"
	"github.com/ruckus/ruckus/app/i18n"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/auth"
)

// defaultAPIRateWindow is the window the API's limits count requests in
// when none is set.
const defaultAPIRateWindow = time.Minute

// rateLimiter counts requests per key in fixed windows. Keys are made for
// callers who presented a valid token (after requireToken), so there are
// at most as many as there are live tokens and users, and for addresses
// that presented invalid ones; entries whose window has passed are swept
// once a window.
type rateLimiter struct {
	window time.Duration
	now    func() time.Time

	mu      sync.Mutex
	counts  map[string]*rateCount
	sweptAt time.Time
}

type rateCount struct {
	n     int
	reset time.Time
}

func newRateLimiter(window time.Duration) *rateLimiter {
	return &rateLimiter{window: cmp.Or(window, defaultAPIRateWindow), now: time.Now, counts: map[string]*rateCount{}}
}

// take counts one request under each key with its limit (0: none) when
// every limit allows it, and otherwise reports how long until the caller
// may try again (0: allowed). A refused request is not counted, so a
// client that retries too early is not kept out past the window.
func (l *rateLimiter) take(limits map[string]int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.sweptAt) >= l.window {
		for k, c := range l.counts {
			if !now.Before(c.reset) {
				delete(l.counts, k)
			}
		}
		l.sweptAt = now
	}
	var wait time.Duration
	counts := make([]*rateCount, 0, len(limits))
	for key, limit := range limits {
		if limit <= 0 {
			continue
		}
		c := l.counts[key]
		if c == nil || !now.Before(c.reset) {
			c = &rateCount{reset: now.Add(l.window)}
			l.counts[key] = c
		}
		if c.n >= limit {
			wait = max(wait, c.reset.Sub(now))
		}
		counts = append(counts, c)
	}
	if wait > 0 {
		return wait
	}
	for _, c := range counts {
		c.n++
	}
	return 0
}

// wait is how long until a request under key may be made, 0 when limit
// (0: none) allows one now; unlike take it counts nothing.
func (l *rateLimiter) wait(key string, limit int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if c := l.counts[key]; limit > 0 && c != nil && now.Before(c.reset) && c.n >= limit {
		return c.reset.Sub(now)
	}
	return 0
}

// badTokensPerAddress bounds the requests with an invalid or revoked API
// token one client address may make per APIRateWindow. Each
// is a database lookup and no token's or user's limit counts it, so an
// address past this bound is answered 429 without one.
const badTokensPerAddress = 30

// badTokenKey is the rate limiter's key of an address's bad tokens.
func badTokenKey(c *fiber.Ctx, s *server) string { return "badtoken:" + s.clientIP(c) }

// refuseBadTokens answers 429 with Retry-After to an address past
// badTokensPerAddress, before its token is looked up.
func (s *server) refuseBadTokens(c *fiber.Ctx) error {
	wait := s.rates.wait(badTokenKey(c, s), badTokensPerAddress)
	if wait <= 0 {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	return fiber.NewError(fiber.StatusTooManyRequests, fmt.Sprintf("too many requests without a valid API token from this address; try again in %d s", secs))
}

// countBadToken counts a request with an invalid token against its address.
func (s *server) countBadToken(c *fiber.Ctx) {
	s.rates.take(map[string]int{badTokenKey(c, s): math.MaxInt})
}

// limitAPI refuses an API request over its token's or its user's limit
// per window with 429 and Retry-After (whole seconds, rounded up). Only
// the web API is limited: agents work through PostgreSQL, never through
// this server, so nothing here slows their database work.
func (s *server) limitAPI(c *fiber.Ctx) error {
	if s.APIRatePerToken <= 0 && s.APIRatePerUser <= 0 {
		return c.Next()
	}
	u := currentUser(c)
	if u == nil {
		return c.Next()
	}
	token, _ := bearerToken(c)
	wait := s.rates.take(map[string]int{
		"token:" + string(auth.HashToken(token)): s.APIRatePerToken,
		"user:" + strconv.FormatInt(u.ID, 10):    s.APIRatePerUser,
	})
	if wait <= 0 {
		return c.Next()
	}
	secs := int(math.Ceil(wait.Seconds()))
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	return fiber.NewError(fiber.StatusTooManyRequests, fmt.Sprintf("too many requests (%s); try again in %d s", s.rateLimits(), secs))
}

// apiLimits says the API's limits on the Settings page, in the reader's
// language (the 429 answer keeps rateLimits' English); no key: none.
func (s *server) apiLimits() i18n.Message {
	args := []any{"Token", s.APIRatePerToken, "User", s.APIRatePerUser, "Window", s.rates.window.String()}
	switch {
	case s.APIRatePerToken > 0 && s.APIRatePerUser > 0:
		return i18n.M("tokens.limits_both", args...)
	case s.APIRatePerToken > 0:
		return i18n.M("tokens.limits_token", args...)
	case s.APIRatePerUser > 0:
		return i18n.M("tokens.limits_user", args...)
	}
	return i18n.Message{}
}

// rateLimits says the API's limits for a person: "at most 600 requests
// per token and 1200 per user every 1m0s".
func (s *server) rateLimits() string {
	var parts []string
	if s.APIRatePerToken > 0 {
		parts = append(parts, fmt.Sprintf("%d per token", s.APIRatePerToken))
	}
	if s.APIRatePerUser > 0 {
		parts = append(parts, fmt.Sprintf("%d per user", s.APIRatePerUser))
	}
	return fmt.Sprintf("at most %s every %s", strings.Join(parts, " and "), s.rates.window)
}
