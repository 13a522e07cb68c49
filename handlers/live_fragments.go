package handlers

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/layout"
)

// liveFragments keeps a benchmark's live fragments (its runs table, its
// run cards) for a short time after they are rendered, and serves the same
// bytes to everyone allowed to see that benchmark who polls within that
// time. So the database is read and the HTML rendered once per benchmark
// per TTL, however many browsers watch it: the cost of watching grows with
// the benchmarks watched, not with the watchers. The fragments are
// rendered for no one in particular (no CSRF token: their buttons post
// through htmx, which sends the token in a header). Agents report every
// second, so a TTL of about a second shows nothing older than the polls
// themselves would. Each language has its copy: the owner reading German
// and an administrator reading English poll the same run.
//
// When a fragment expires, every browser polling it asks at about the
// same time; one of them renders it and the others wait for its bytes
// (fetch), so it is rendered once per TTL, not once per watcher.
type liveFragments struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[liveKey]liveFragment
	// rendering are the fragments being rendered now, for those who
	// ask meanwhile to wait on.
	rendering map[liveKey]*liveRender
}

// liveRender is one render in progress: done closes when it has ended
// (kept or not); waiters counts those waiting for it.
type liveRender struct {
	done    chan struct{}
	waiters int
}

// liveKey names a fragment: a benchmark's runs table (run 0) or one run's
// card, in one language of the interface (its words and number formats).
type liveKey struct {
	benchmark, run int64
	lang           string
}

type liveFragment struct {
	owner   int64 // the benchmark's owner; admins may read it too
	body    []byte
	expires time.Time
}

// maxLiveFragments bounds the memory: past it, expired entries go, and if
// that is not enough, all of them.
const maxLiveFragments = 4096

func newLiveFragments(ttl time.Duration) *liveFragments {
	return &liveFragments{ttl: ttl, m: map[liveKey]liveFragment{}, rendering: map[liveKey]*liveRender{}}
}

// fetch is fragment k for viewer v: the shared copy while it is fresh and
// v may read it; else, when someone is rendering it already, that
// render's copy once it is kept (if v may read it); else render's, kept
// when render says so. A viewer who may not read the kept copy renders
// its own, so nobody gets bytes that are not theirs.
func (f *liveFragments) fetch(k liveKey, v store.Viewer, render func() (e liveFragment, keep bool, err error)) (liveFragment, error) {
	if f.ttl <= 0 {
		e, _, err := render()
		return e, err
	}
	if e, ok := f.get(k, v); ok {
		return e, nil
	}
	f.mu.Lock()
	if r, ok := f.rendering[k]; ok {
		r.waiters++
		f.mu.Unlock()
		<-r.done
		if e, ok := f.get(k, v); ok {
			return e, nil
		}
		e, _, err := render()
		return e, err
	}
	r := &liveRender{done: make(chan struct{})}
	f.rendering[k] = r
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.rendering, k)
		f.mu.Unlock()
		close(r.done)
	}()
	e, keep, err := render()
	if err == nil && keep {
		f.put(k, e)
	}
	return e, err
}

// get returns the fragment if it is fresh and the viewer may read it.
func (f *liveFragments) get(k liveKey, v store.Viewer) (liveFragment, bool) {
	if f.ttl <= 0 {
		return liveFragment{}, false
	}
	f.mu.Lock()
	e, ok := f.m[k]
	f.mu.Unlock()
	if !ok || time.Now().After(e.expires) || (e.owner != v.UserID && !v.Admin) {
		return liveFragment{}, false
	}
	return e, true
}

func (f *liveFragments) put(k liveKey, e liveFragment) {
	if f.ttl <= 0 {
		return
	}
	now := time.Now()
	e.expires = now.Add(f.ttl)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.m) >= maxLiveFragments {
		for k, old := range f.m {
			if now.After(old.expires) {
				delete(f.m, k)
			}
		}
		if len(f.m) >= maxLiveFragments {
			clear(f.m)
		}
	}
	f.m[k] = e
}

// forget drops a benchmark's fragments, after this server changed its runs
// (cancel, retry), so that the next poll shows the change.
func (f *liveFragments) forget(benchmark int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.m {
		if k.benchmark == benchmark {
			delete(f.m, k)
		}
	}
}

// renderShared renders component for no one in particular: without the
// visitor's CSRF token or name, so the bytes can be shared.
func renderShared(ctx context.Context, component templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	if err := component.Render(layout.WithInfo(ctx, &layout.Info{}), &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sendLive writes a live fragment.
func sendLive(c *fiber.Ctx, e liveFragment) error {
	c.Type("html", "utf-8")
	return c.Status(fiber.StatusOK).Send(e.body)
}
