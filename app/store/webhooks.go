package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MaxWebhooksPerUser bounds a user's subscriptions.
const MaxWebhooksPerUser = 20

// ErrTooManyWebhooks: the user has MaxWebhooksPerUser already.
var ErrTooManyWebhooks = errors.New("at most 20 webhooks per user: delete one first")

// Webhook is a user's subscription to events of their benchmarks.
type Webhook struct {
	ID        int64
	UserID    int64
	URL       string
	Secret    string
	Events    []string
	Format    string
	CreatedAt time.Time
}

// NewWebhook is what a subscription is made from (validated by the caller).
type NewWebhook struct {
	URL    string
	Secret string
	Events []string
	Format string
}

const webhookColumns = `id, user_id, url, secret, events, format, created_at`

func scanWebhook(row pgx.CollectableRow) (Webhook, error) {
	var w Webhook
	err := row.Scan(&w.ID, &w.UserID, &w.URL, &w.Secret, &w.Events, &w.Format, &w.CreatedAt)
	return w, err
}

// CreateWebhook subscribes the user's webhook, within MaxWebhooksPerUser.
func (q *Queries) CreateWebhook(ctx context.Context, userID int64, in NewWebhook) (Webhook, error) {
	rows, _ := q.db.Query(ctx, `INSERT INTO webhooks (user_id, url, secret, events, format)
		SELECT @user, @url, @secret, @events, @format
		WHERE (SELECT count(*) FROM webhooks WHERE user_id = @user) < @max
		RETURNING `+webhookColumns,
		pgx.NamedArgs{"user": userID, "url": in.URL, "secret": in.Secret, "events": in.Events, "format": in.Format, "max": MaxWebhooksPerUser})
	w, err := pgx.CollectExactlyOneRow(rows, scanWebhook)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, ErrTooManyWebhooks
	}
	return w, mapErr(err, "create webhook")
}

// ListWebhooks returns the user's webhooks, oldest first.
func (q *Queries) ListWebhooks(ctx context.Context, userID int64) ([]Webhook, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE user_id = @user ORDER BY id`, pgx.NamedArgs{"user": userID})
	ws, err := pgx.CollectRows(rows, scanWebhook)
	return ws, mapErr(err, "list webhooks")
}

// DeleteWebhook removes one of the user's webhooks with its deliveries
// (ErrNotFound: none of theirs by that id).
func (q *Queries) DeleteWebhook(ctx context.Context, userID, id int64) error {
	tag, err := q.db.Exec(ctx, `DELETE FROM webhooks WHERE id = @id AND user_id = @user`, pgx.NamedArgs{"id": id, "user": userID})
	if err != nil {
		return mapErr(err, "delete webhook")
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// Delivery is one event sent (or being sent) to one webhook.
type Delivery struct {
	ID         int64
	WebhookID  int64
	URL        string
	Event      string
	State      string
	Attempts   int
	LastStatus *int
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// WebhookDeliveries returns the user's latest deliveries, newest first.
func (q *Queries) WebhookDeliveries(ctx context.Context, userID int64, limit int) ([]Delivery, error) {
	rows, _ := q.db.Query(ctx, `SELECT d.id, d.webhook_id, w.url, d.event, d.state, d.attempts, d.last_status, d.last_error, d.created_at, d.updated_at
		FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
		WHERE w.user_id = @user ORDER BY d.id DESC LIMIT @limit`, pgx.NamedArgs{"user": userID, "limit": limit})
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Delivery, error) {
		var d Delivery
		return d, r.Scan(&d.ID, &d.WebhookID, &d.URL, &d.Event, &d.State, &d.Attempts, &d.LastStatus, &d.LastError, &d.CreatedAt, &d.UpdatedAt)
	})
	return ds, mapErr(err, "list webhook deliveries")
}

// AddDeliveries records the event for each of the user's webhooks that
// subscribed to it, once per webhook and key, and returns the new
// deliveries' ids (none for an event already recorded).
func (q *Queries) AddDeliveries(ctx context.Context, userID int64, event, key string, payload []byte) ([]int64, error) {
	rows, _ := q.db.Query(ctx, `INSERT INTO webhook_deliveries (webhook_id, event, event_key, payload)
		SELECT id, @event, @key, @payload FROM webhooks WHERE user_id = @user AND @event = ANY(events)
		ON CONFLICT ON CONSTRAINT webhook_deliveries_once DO NOTHING RETURNING id`,
		pgx.NamedArgs{"user": userID, "event": event, "key": key, "payload": payload})
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return ids, mapErr(err, "record webhook deliveries")
}

// PendingDelivery is what sending a delivery needs.
type PendingDelivery struct {
	ID      int64
	Event   string
	URL     string
	Secret  string
	Format  string
	Payload []byte
	State   string
}

// DeliveryToSend returns the delivery with its webhook (ErrNotFound: the
// webhook was deleted since).
func (q *Queries) DeliveryToSend(ctx context.Context, id int64) (PendingDelivery, error) {
	var d PendingDelivery
	err := q.db.QueryRow(ctx, `SELECT d.id, d.event, w.url, w.secret, w.format, d.payload::text, d.state
		FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = @id`, pgx.NamedArgs{"id": id}).
		Scan(&d.ID, &d.Event, &d.URL, &d.Secret, &d.Format, &d.Payload, &d.State)
	return d, mapErr(err, "read webhook delivery")
}

// RecordDeliveryAttempt notes one attempt: its HTTP status (nil when none
// came back), its error (empty on success) and the state it leaves the
// delivery in.
func (q *Queries) RecordDeliveryAttempt(ctx context.Context, id int64, state string, status *int, errText string) error {
	if len(errText) > 1024 {
		errText = errText[:1024]
	}
	_, err := q.db.Exec(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, state = @state, last_status = @status,
		last_error = @err, updated_at = now() WHERE id = @id`,
		pgx.NamedArgs{"id": id, "state": state, "status": status, "err": errText})
	return mapErr(err, "record webhook delivery")
}

// RunNotice is what an ended run's events say about it.
type RunNotice struct {
	RunID         int64
	BenchmarkID   int64
	BenchmarkName string
	OwnerID       int64
	// OwnerLanguage is the owner's interface language setting, the
	// language of the notification's text ("" follows no browser: English).
	OwnerLanguage string
	State         string
	Model         string
	Runtime       string
	Hardware      string
	Error         string
	FinishedAt    *time.Time
	// Regressions of the run that its owner may see (regressionVisible).
	Regressions []Regression
	// The benchmark's runs by state, and when the last one ended.
	Runs         map[string]int
	LastFinished *time.Time
}

// RunNoticeOf reads the run, its regressions and its benchmark's runs.
// A judge's run (its hidden benchmark judges another run) is no event of
// its owner's: ErrNotFound, as for a deleted benchmark.
func (q *Queries) RunNoticeOf(ctx context.Context, runID int64) (RunNotice, error) {
	var n RunNotice
	var regs []byte
	err := q.db.QueryRow(ctx, `SELECT r.id, b.id, b.name, b.owner_id, r.state, m.name, r.runtime, r.hardware_profile, r.error, r.finished_at,
			`+regressionsJSON+`, (SELECT max(x.finished_at) FROM runs x WHERE x.benchmark_id = b.id), u.language
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id JOIN models m ON m.id = r.model_id JOIN users u ON u.id = b.owner_id
		WHERE r.id = @run AND b.deleted_at IS NULL AND b.judges_run_id IS NULL`, pgx.NamedArgs{"run": runID}).
		Scan(&n.RunID, &n.BenchmarkID, &n.BenchmarkName, &n.OwnerID, &n.State, &n.Model, &n.Runtime, &n.Hardware, &n.Error, &n.FinishedAt,
			&regs, &n.LastFinished, &n.OwnerLanguage)
	if err != nil {
		return n, mapErr(err, "read the run for its events")
	}
	if err := json.Unmarshal(regs, &n.Regressions); err != nil {
		return n, fmt.Errorf("read the run's regressions: %w", err)
	}
	rows, _ := q.db.Query(ctx, `SELECT state, count(*) FROM runs WHERE benchmark_id = @b GROUP BY state`, pgx.NamedArgs{"b": n.BenchmarkID})
	n.Runs = map[string]int{}
	var state string
	var c int
	_, err = pgx.ForEachRow(rows, []any{&state, &c}, func() error {
		n.Runs[state] = c
		return nil
	})
	return n, mapErr(err, "count the benchmark's runs")
}
