package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// A run whose row another transaction holds (an agent may keep one open
// on the run it works) is not worth a minute of a pooled connection per
// request: 25 cancels of it at once each answer 409 with Retry-After
// within a few lock timeouts, never 500, and the readiness probe and
// another user's API call (a pooled connection each) answer quickly
// meanwhile.
func TestCancelsOfALockedRunAnswerQuickly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	w := testkit.NewWorld(ctx, t, e.store, nil)
	tok := e.token(w.Owner)
	other := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))

	holder, err := pgx.Connect(ctx, pgtest.URL(t, e.store.Pool()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Close(context.Background()) })
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT id FROM runs WHERE id = $1 FOR UPDATE`, w.Run); err != nil {
		t.Fatal(err)
	}

	const cancels = 25
	// Each waits at most the lock timeout, a pool's worth at a time.
	limit := testkit.Scaled(time.Duration(cancels)*store.RowLockTimeout + 10*time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	statuses := make([]int, cancels)
	retry := make([]string, cancels)
	for i := range cancels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", w.Run), nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			res, err := e.app.App.Test(req, int(limit.Milliseconds()))
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			statuses[i], retry[i] = res.StatusCode, res.Header.Get("Retry-After")
		}()
	}
	// The cancels are waiting for the row before anyone else asks: the
	// order in which another user's request would find the pool taken.
	testkit.WaitFor(t, "the cancels to wait for the held row", func() bool {
		var waiting int
		err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&waiting)
		return err == nil && waiting >= 1
	})
	readyStart := time.Now()
	if res, err := e.app.App.Test(httptest.NewRequest(http.MethodGet, "/readyz", nil), -1); err != nil || res.StatusCode != 200 {
		t.Fatalf("readyz during the cancels: %v %v", res, err)
	}
	ready := time.Since(readyStart)
	// Another user's API call meanwhile.
	meStart := time.Now()
	if r := e.api(http.MethodGet, "/api/v1/me", other, nil, ""); r.status != 200 {
		t.Fatalf("another user's /api/v1/me during the cancels: %d %v", r.status, r.body)
	}
	me := time.Since(meStart)
	wg.Wait()
	took := time.Since(start)
	for i, st := range statuses {
		if st != http.StatusConflict || retry[i] == "" {
			t.Errorf("cancel %d of a locked run: %d (Retry-After %q), want 409 with Retry-After", i, st, retry[i])
		}
	}
	if took > limit {
		t.Errorf("25 cancels of a locked run took %v, want within %v", took, limit)
	}
	if most := testkit.Scaled(3 * store.RowLockTimeout); ready > most {
		t.Errorf("/readyz took %v while the cancels waited, want within %v", ready, most)
	}
	if most := testkit.Scaled(3 * store.RowLockTimeout); me > most {
		t.Errorf("another user's /api/v1/me took %v while the cancels waited, want within %v", me, most)
	}
	t.Logf("25 cancels answered 409 in %v; meanwhile /readyz in %v, another user's /api/v1/me in %v", took, ready, me)

	// Once the holder lets go, the same cancel goes through.
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := e.api(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", w.Run), tok, nil, ""); r.status != 200 {
		t.Fatalf("cancel after the lock went: %d %v", r.status, r.body)
	} else if !strings.Contains(fmt.Sprint(r.body), "changed") {
		t.Fatalf("cancel after the lock went: %v", r.body)
	}
}

// An agent's row is the agent's to hold (its heartbeat, its registration),
// and an administrator may click drain, undrain, deactivate or reactivate
// on it many times at once: each waits at most the lock timeout in one of
// the Store's lock-waiting slots and answers 409 with Retry-After, and the
// readiness probe and another user's API call answer quickly meanwhile,
// since the slots leave a pooled connection free
// (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
func TestAdminActionsOnAHeldAgentAnswerQuickly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	a := testkit.Agent(ctx, t, e.store, nil)
	admin := e.token(e.createUser("root@example.com", "correct horse", store.RoleAdmin))
	other := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))

	holder, err := pgx.Connect(ctx, pgtest.URL(t, e.store.Pool()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Close(context.Background()) })
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT id FROM agents WHERE id = $1 FOR UPDATE`, a.ID); err != nil {
		t.Fatal(err)
	}

	actions := []string{"drain", "undrain", "deactivate", "reactivate"}
	const clicks = 24
	limit := testkit.Scaled(time.Duration(clicks)*store.RowLockTimeout + 10*time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	statuses := make([]int, clicks)
	retry := make([]string, clicks)
	for i := range clicks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/api/v1/agents/%d/%s", a.ID, actions[i%len(actions)]), nil)
			req.Header.Set("Authorization", "Bearer "+admin)
			res, err := e.app.App.Test(req, int(limit.Milliseconds()))
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			statuses[i], retry[i] = res.StatusCode, res.Header.Get("Retry-After")
		}()
	}
	// The actions wait for the held row before anyone else asks.
	testkit.WaitFor(t, "the actions to wait for the held row", func() bool {
		var waiting int
		err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&waiting)
		return err == nil && waiting >= 1
	})
	readyStart := time.Now()
	if res, err := e.app.App.Test(httptest.NewRequest(http.MethodGet, "/readyz", nil), -1); err != nil || res.StatusCode != 200 {
		t.Fatalf("readyz during the actions: %v %v", res, err)
	}
	ready := time.Since(readyStart)
	meStart := time.Now()
	if r := e.api(http.MethodGet, "/api/v1/me", other, nil, ""); r.status != 200 {
		t.Fatalf("another user's /api/v1/me during the actions: %d %v", r.status, r.body)
	}
	me := time.Since(meStart)
	wg.Wait()
	took := time.Since(start)
	for i, st := range statuses {
		if st != http.StatusConflict || retry[i] == "" {
			t.Errorf("%s %d of a held agent: %d (Retry-After %q), want 409 with Retry-After", actions[i%len(actions)], i, st, retry[i])
		}
	}
	if took > limit {
		t.Errorf("%d actions on a held agent took %v, want within %v", clicks, took, limit)
	}
	if most := testkit.Scaled(3 * store.RowLockTimeout); ready > most {
		t.Errorf("/readyz took %v while the actions waited, want within %v", ready, most)
	}
	if most := testkit.Scaled(3 * store.RowLockTimeout); me > most {
		t.Errorf("another user's /api/v1/me took %v while the actions waited, want within %v", me, most)
	}
	t.Logf("%d actions on a held agent answered 409 in %v; meanwhile /readyz in %v, another user's /api/v1/me in %v", clicks, took, ready, me)

	// Once the holder lets go, the same action goes through.
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := e.api(http.MethodPost, fmt.Sprintf("/api/v1/agents/%d/drain", a.ID), admin, nil, ""); r.status != 200 {
		t.Fatalf("drain after the lock went: %d %v", r.status, r.body)
	}
}
