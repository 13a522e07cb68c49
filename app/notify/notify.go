// Package notify tells users when their benchmarks finish, fail or
// regress: it records each event for the webhooks that subscribed to it
// and delivers it (River jobs, jobs.DeliverWebhookArgs) as JSON signed
// with HMAC-SHA256, or as Slack-compatible text, only to addresses its
// Guard allows.
package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Events a webhook may subscribe to.
const (
	EventBenchmarkFinished = "benchmark.finished"
	EventBenchmarkFailed   = "benchmark.failed"
	EventRunRegression     = "run.regression"
)

// Events lists them in the order forms show them.
var Events = []string{EventBenchmarkFinished, EventBenchmarkFailed, EventRunRegression}

// Store is what the notifier reads and writes.
type Store interface {
	RunNoticeOf(ctx context.Context, runID int64) (store.RunNotice, error)
	ConclusionFacts(ctx context.Context, benchmarkID int64) (store.ConclusionFacts, error)
	InTxWith(ctx context.Context, fn func(tx pgx.Tx, q *store.Queries) error) error
}

// Inserter queues delivery jobs in the transaction that records them.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Notifier turns an ended run into its events.
type Notifier struct {
	Store Store
	River Inserter
}

// Event is the JSON body a webhook receives.
type Event struct {
	Event      string    `json:"event"`
	OccurredAt time.Time `json:"occurred_at"`
	Benchmark  Benchmark `json:"benchmark"`
	// Run is the run a run.regression is about.
	Run *Run `json:"run,omitempty"`
	// Text is the event in a sentence (what the Slack form sends).
	Text string `json:"text"`
}

// Benchmark is the benchmark an event is about.
type Benchmark struct {
	ID   int64          `json:"id"`
	Name string         `json:"name"`
	Path string         `json:"path"`
	Runs map[string]int `json:"runs"`
}

// Run is the run a regression event is about.
type Run struct {
	ID          int64              `json:"id"`
	Model       string             `json:"model"`
	Runtime     string             `json:"runtime"`
	Hardware    string             `json:"hardware"`
	State       string             `json:"state"`
	Path        string             `json:"path"`
	Regressions []store.Regression `json:"regressions"`
}

// RunEnded records the events an ended run gives once its conclusions are
// drawn: run.regression when it is flagged as a regression, and
// benchmark.finished or benchmark.failed when its benchmark's
// conclusions are complete (conclude.StatusOf: no run active, no search
// rung undecided, no run's scoring, execution or judging to come;
// failed: none completed). Each event is recorded once per webhook,
// whichever of several runs concluding together gets here first: the
// last of them to record its run concluded finds every run concluded
// (docs/operations.md#webhooks).
func (n *Notifier) RunEnded(ctx context.Context, runID int64) error {
	rn, err := n.Store.RunNoticeOf(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // its benchmark was deleted: nobody is told
	}
	if err != nil {
		return err
	}
	var events []struct {
		key string
		ev  Event
	}
	now := time.Now().UTC()
	b := Benchmark{ID: rn.BenchmarkID, Name: rn.BenchmarkName, Path: fmt.Sprintf("/benchmarks/%d", rn.BenchmarkID), Runs: rn.Runs}
	if len(rn.Regressions) > 0 && rn.FinishedAt != nil {
		ev := Event{Event: EventRunRegression, OccurredAt: now, Benchmark: b, Run: &Run{ID: rn.RunID, Model: rn.Model, Runtime: rn.Runtime,
			Hardware: rn.Hardware, State: rn.State, Path: fmt.Sprintf("/runs/%d", rn.RunID), Regressions: rn.Regressions}}
		ev.Text = regressionText(rn)
		events = append(events, struct {
			key string
			ev  Event
		}{regressionKey(rn), ev})
	}
	concluded, err := n.concluded(ctx, rn)
	if err != nil {
		return err
	}
	if concluded {
		event := EventBenchmarkFinished
		if rn.Runs["completed"] == 0 {
			event = EventBenchmarkFailed
		}
		ev := Event{Event: event, OccurredAt: now, Benchmark: b, Text: benchmarkText(event, rn)}
		// Keyed by when its last run ended: a benchmark finished again
		// (a run retried) is told again.
		events = append(events, struct {
			key string
			ev  Event
		}{fmt.Sprintf("%s:%d:%s", event, rn.BenchmarkID, rn.LastFinished.UTC().Format(time.RFC3339Nano)), ev})
	}
	if len(events) == 0 {
		return nil
	}
	return n.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		for _, e := range events {
			body, err := json.Marshal(e.ev)
			if err != nil {
				return err
			}
			ids, err := q.AddDeliveries(ctx, rn.OwnerID, e.ev.Event, e.key, body)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if _, err := n.River.InsertTx(ctx, tx, jobs.DeliverWebhookArgs{DeliveryID: id}, nil); err != nil {
					return fmt.Errorf("queue webhook delivery: %w", err)
				}
			}
		}
		return nil
	})
}

// concluded says whether rn's benchmark has ended and its conclusions
// are complete.
func (n *Notifier) concluded(ctx context.Context, rn store.RunNotice) (bool, error) {
	if rn.Runs["queued"]+rn.Runs["running"] > 0 || rn.LastFinished == nil {
		return false, nil
	}
	st, err := conclude.BenchmarkStatus(ctx, n.Store, rn.BenchmarkID)
	return err == nil && !st.Pending, err
}

// regressionKey names a run.regression event by its target, not its run:
// every repeat of a target carries the same flags (conclude.Regressions),
// and two of them concluding at once both find them, so the target's
// event goes out once — keyed by its benchmark, the run it is flagged
// against and the metrics flagged. A target decided again with other
// flags (a rescoring) is told again.
func regressionKey(rn store.RunNotice) string {
	metrics := make([]string, len(rn.Regressions))
	for i, g := range rn.Regressions {
		metrics[i] = g.Metric
	}
	slices.Sort(metrics)
	return fmt.Sprintf("%s:%d:%d:%s", EventRunRegression, rn.BenchmarkID, rn.Regressions[0].AgainstRunID, strings.Join(metrics, ","))
}

// benchmarkText is the event in a sentence, in the owner's language (the
// event's fields stay English: machines read them).
func benchmarkText(event string, rn store.RunNotice) string {
	tr := i18n.Default().Lang(rn.OwnerLanguage)
	var parts []string
	for _, s := range []struct{ state, key string }{
		{"completed", "notify.n_completed"}, {"failed", "notify.n_failed"}, {"cancelled", "notify.n_cancelled"},
	} {
		if rn.Runs[s.state] > 0 {
			parts = append(parts, tr.T(s.key, "N", rn.Runs[s.state]))
		}
	}
	key := "notify.benchmark_finished"
	if event == EventBenchmarkFailed {
		key = "notify.benchmark_failed"
	}
	return tr.T(key, "Name", rn.BenchmarkName, "ID", rn.BenchmarkID, "Runs", strings.Join(parts, ", "))
}

func regressionText(rn store.RunNotice) string {
	tr := i18n.Default().Lang(rn.OwnerLanguage)
	var parts []string
	for _, g := range rn.Regressions {
		// What the engine concluded (app/regress through conclude.Compare),
		// in the owner's language; a flag kept before its sentence was
		// keeps the short form.
		var said conclude.Said
		if len(g.DetailSaid) > 0 && json.Unmarshal(g.DetailSaid, &said) == nil && said.Code != "" {
			parts = append(parts, said.In(tr))
			continue
		}
		parts = append(parts, tr.T("notify.against", "Metric", g.Metric, "Delta", fmt.Sprintf("%+.4g", g.Delta), "Run", g.AgainstRunID))
	}
	return tr.T("notify.regressed", "Run", rn.RunID, "Name", rn.BenchmarkName, "ID", rn.BenchmarkID,
		"Model", rn.Model, "Runtime", rn.Runtime, "Hardware", rn.Hardware, "What", strings.Join(parts, "; "))
}
