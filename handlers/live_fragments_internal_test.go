package handlers

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// waitingFor reports how many are waiting for k's render in progress.
func (f *liveFragments) waitingFor(k liveKey) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.rendering[k]; ok {
		return r.waiters
	}
	return 0
}

// When a fragment has expired, the browsers that poll it at once get one
// render: the first renders, the others wait for its bytes. A viewer who
// may not read the kept copy renders its own.
func TestExpiredLiveFragmentIsRenderedOnceForItsWatchers(t *testing.T) {
	t.Parallel()
	f := newLiveFragments(time.Hour)
	k := liveKey{benchmark: 7, lang: "en"}
	owner := store.Viewer{UserID: 1}
	var renders atomic.Int32
	release := make(chan struct{})
	render := func() (liveFragment, bool, error) {
		renders.Add(1)
		<-release
		return liveFragment{owner: 1, body: []byte("table")}, true, nil
	}
	const watchers = 8
	got := make([]string, watchers)
	var wg sync.WaitGroup
	wg.Go(func() {
		e, err := f.fetch(k, owner, render)
		if err == nil {
			got[0] = string(e.body)
		}
	})
	testkit.WaitFor(t, "the first watcher to render", func() bool { return renders.Load() == 1 })
	for i := 1; i < watchers; i++ {
		wg.Go(func() {
			e, err := f.fetch(k, owner, render)
			if err == nil {
				got[i] = string(e.body)
			}
		})
	}
	testkit.WaitFor(t, "the other watchers to wait", func() bool { return f.waitingFor(k) == watchers-1 })
	close(release)
	wg.Wait()
	if n := renders.Load(); n != 1 {
		t.Errorf("%d watchers of an expired fragment caused %d renders, want 1", watchers, n)
	}
	for i, body := range got {
		if body != "table" {
			t.Errorf("watcher %d got %q", i, body)
		}
	}

	// Another user does not get the owner's copy: they render their own
	// (the handler's render answers them 404).
	other := store.Viewer{UserID: 2}
	_, err := f.fetch(k, other, func() (liveFragment, bool, error) { return liveFragment{}, false, errors.New("no such benchmark") })
	if err == nil {
		t.Error("another user was served the owner's fragment")
	}
}
