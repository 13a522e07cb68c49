package handlers

import (
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Streamed exports hold a database connection (a COPY or a cursor) for as
// long as the client takes to read them, so an unread download would keep
// one forever and a few would take the whole pool, freezing every other
// user. Three bounds keep the pool for everyone: so many exports per user,
// so many in all (fewer than the pool's connections), and a client that
// takes nothing for ExportStallTimeout is cut off (see deadlineWriter).
const (
	defaultExportsPerUser     = 2
	defaultExportsTotal       = 4
	defaultExportStallTimeout = 30 * time.Second
)

// exportGate counts the exports streaming now, in all and per user.
type exportGate struct {
	perUser, total int
	mu             sync.Mutex
	running        int
	byUser         map[int64]int
}

func newExportGate(perUser, total int) *exportGate {
	if perUser <= 0 {
		perUser = defaultExportsPerUser
	}
	if total <= 0 {
		total = defaultExportsTotal
	}
	return &exportGate{perUser: perUser, total: total, byUser: map[int64]int{}}
}

// enter takes a place for one of user's exports, or says why there is
// none (429, with the limit that was reached). Every successful enter is
// followed by exactly one leave.
func (g *exportGate) enter(c *fiber.Ctx, user int64) (leave func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var full error
	switch {
	case g.byUser[user] >= g.perUser:
		full = catalogueErr(fiber.StatusTooManyRequests, "exports.too_many_yours", "N", g.byUser[user])
	case g.running >= g.total:
		full = catalogueErr(fiber.StatusTooManyRequests, "exports.too_many_all", "N", g.running)
	}
	if full != nil {
		c.Set(fiber.HeaderRetryAfter, "10")
		return nil, full
	}
	g.running++
	g.byUser[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.running--
			if g.byUser[user]--; g.byUser[user] <= 0 {
				delete(g.byUser, user)
			}
		})
	}, nil
}
