package handlers

import (
	"testing"
	"time"
)

// Windows are fixed and per key; refused requests are not counted; keys
// whose window has passed are forgotten.
func TestRateLimiterWindows(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newRateLimiter(time.Minute)
	l.now = func() time.Time { return now }
	limits := map[string]int{"token:a": 2, "user:1": 3, "off": 0}
	for i := range 2 {
		if w := l.take(limits); w != 0 {
			t.Fatalf("request %d: wait %v", i+1, w)
		}
	}
	now = now.Add(20 * time.Second)
	if w := l.take(limits); w != 40*time.Second {
		t.Fatalf("over the token's limit: wait %v, want the 40 s left of its window", w)
	}
	if w := l.take(map[string]int{"token:b": 2, "user:1": 3}); w != 0 {
		t.Fatalf("another token of the user: wait %v", w)
	}
	if w := l.take(map[string]int{"token:b": 2, "user:1": 3}); w != 40*time.Second {
		t.Fatalf("over the user's limit: wait %v", w)
	}
	if _, ok := l.counts["off"]; ok {
		t.Fatal("a key without a limit was counted")
	}
	now = now.Add(40 * time.Second)
	if w := l.take(limits); w != 0 || l.counts["token:a"].n != 1 || l.counts["user:1"].n != 1 {
		t.Fatalf("the next window: wait %v, counts %+v %+v", w, l.counts["token:a"], l.counts["user:1"])
	}
	now = now.Add(time.Minute)
	l.take(limits)
	if _, ok := l.counts["token:b"]; ok {
		t.Fatal("a key whose window passed was kept")
	}
}
