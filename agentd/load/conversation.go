package load

import "sync"

// order hands out the items of one loop in index order, holding a turn of
// a conversation back until the previous turn (Config.Prev) has finished,
// so that the turn can carry the answer to it. Other items, and the first
// turns of other conversations, go meanwhile: different conversations run
// concurrently under the load profile.
type order struct {
	items []int
	prev  map[int]int // nil: no conversations, items go in order

	mu      sync.Mutex
	pos     int          // without prev: the next item
	waiting []int        // with prev: items not yet handed out, in order
	pending map[int]bool // with prev: items of this loop not yet finished
	wake    chan struct{}
}

func newOrder(items []int, prev map[int]int) *order {
	o := &order{items: items}
	if len(prev) == 0 {
		return o
	}
	o.prev, o.waiting, o.wake = prev, append([]int(nil), items...), make(chan struct{}, 1)
	o.pending = make(map[int]bool, len(items))
	for _, idx := range items {
		o.pending[idx] = true
	}
	return o
}

// next returns the next item that may be sent, waiting while every item
// left waits for an earlier turn in flight; false when none is left or
// the generator must stop.
func (o *order) next(g *gen) (int, bool) {
	if o.prev == nil {
		if o.pos == len(o.items) {
			return 0, false
		}
		o.pos++
		return o.items[o.pos-1], true
	}
	for {
		o.mu.Lock()
		if len(o.waiting) == 0 {
			o.mu.Unlock()
			return 0, false
		}
		for i, idx := range o.waiting {
			// A turn whose previous turn is not in this loop (sent by an
			// earlier segment or sweep step) or has finished is ready.
			if p, has := o.prev[idx]; !has || !o.pending[p] {
				o.waiting = append(o.waiting[:i], o.waiting[i+1:]...)
				o.mu.Unlock()
				return idx, true
			}
		}
		o.mu.Unlock()
		select {
		case <-o.wake:
		case <-g.stop:
			return 0, false
		case <-g.ctx.Done():
			g.halt(StoppedCancelled)
			return 0, false
		case <-g.cfg.Drain:
			g.halt(StoppedDrained)
			return 0, false
		}
	}
}

// exhausted reports whether every item was handed out.
func (o *order) exhausted() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.prev == nil {
		return o.pos == len(o.items)
	}
	return len(o.waiting) == 0
}

// done marks idx finished (answered, failed or cut short), releasing the
// next turn of its conversation.
func (o *order) done(idx int) {
	if o == nil || o.prev == nil {
		return
	}
	o.mu.Lock()
	delete(o.pending, idx)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}
