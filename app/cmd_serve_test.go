package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/jobs"
)

// The reaper's job does not queue behind the server's scoring: it has a
// queue of its own, which the server works and no agent can serve.
func TestReaperHasAQueueOfItsOwn(t *testing.T) {
	cfg := serverRiverConfig(config.Config{AgentStaleAfter: 15 * time.Second}, river.NewWorkers(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	reaper, score := jobs.ReaperArgs{}.InsertOpts().Queue, jobs.ScoreRunArgs{}.InsertOpts().Queue
	if reaper == score {
		t.Fatalf("the reaper shares the %q queue with scoring", reaper)
	}
	for _, q := range []string{reaper, score} {
		if cfg.Queues[q].MaxWorkers < 1 {
			t.Fatalf("the server does not work the %q queue: %v", q, cfg.Queues)
		}
	}
	if strings.Contains(reaper, "_") {
		t.Fatalf("the reaper's queue %q has the shape of an agent's (profile_runtime)", reaper)
	}
}
