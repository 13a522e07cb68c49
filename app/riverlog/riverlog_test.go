package riverlog_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/riverlog"
)

// River's periodic job counts are debug lines: gone from an info log,
// kept (at DEBUG) in a debug one; River's other lines are untouched.
func TestProducerJobCountsAreDebug(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		level     slog.Level
		wantCount string
	}{{slog.LevelInfo, ""}, {slog.LevelDebug, "level=DEBUG msg=\"producer: Producer job counts\""}} {
		var b bytes.Buffer
		l := riverlog.New(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: c.level}))).With("component", "river")
		l.Info("producer: Producer job counts", "queue", "server", "num_jobs_running", 1)
		l.Info("River client started", "client_id", "x")
		l.Warn("producer: Producer job counts") // not River's info line: kept as it is
		out := b.String()
		if !strings.Contains(out, `level=INFO msg="River client started" component=river client_id=x`) || !strings.Contains(out, "level=WARN") {
			t.Errorf("level %v: other lines changed:\n%s", c.level, out)
		}
		if got := strings.Contains(out, "level=INFO msg=\"producer: Producer job counts\""); got {
			t.Errorf("level %v: the job counts at INFO:\n%s", c.level, out)
		}
		if c.wantCount != "" && !strings.Contains(out, c.wantCount) {
			t.Errorf("level %v: no debug job counts:\n%s", c.level, out)
		}
	}
}
