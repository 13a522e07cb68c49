package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// WebhookQueue is the server's queue of webhook deliveries, apart from
// scoring so that a slow receiver holds nothing else up.
const WebhookQueue = "webhooks"

// WebhookAttempts is how many times a delivery is tried.
const WebhookAttempts = 8

// DeliverWebhookArgs sends one recorded webhook delivery.
type DeliverWebhookArgs struct {
	DeliveryID int64 `json:"delivery_id"`
}

// Kind is the job kind, stable across versions.
func (DeliverWebhookArgs) Kind() string { return "deliver_webhook" }

// InsertOpts puts deliveries on the webhook queue.
func (DeliverWebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: WebhookQueue, MaxAttempts: WebhookAttempts}
}

// WebhookDeliverer makes one attempt at a delivery (notify.Deliverer).
type WebhookDeliverer interface {
	Deliver(ctx context.Context, id int64, final bool) error
}

// DeliverWebhookWorker delivers webhooks, retrying with backoff.
type DeliverWebhookWorker struct {
	river.WorkerDefaults[DeliverWebhookArgs]
	Deliverer WebhookDeliverer
	// Backoff is the wait before each retry (after attempt 1, 2, …; the
	// last repeats); nil uses WebhookBackoff.
	Backoff []time.Duration
}

// WebhookBackoff: 10 s, 30 s, 2 min, 10 min, 30 min, then hourly: about
// three and a half hours from the first attempt to the eighth.
var WebhookBackoff = []time.Duration{10 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}

// Timeout bounds one attempt.
func (w *DeliverWebhookWorker) Timeout(*river.Job[DeliverWebhookArgs]) time.Duration {
	return time.Minute
}

// NextRetry waits by the backoff table.
func (w *DeliverWebhookWorker) NextRetry(job *river.Job[DeliverWebhookArgs]) time.Time {
	b := w.Backoff
	if b == nil {
		b = WebhookBackoff
	}
	i := min(max(job.Attempt-1, 0), len(b)-1)
	return time.Now().Add(b[i])
}

// Work makes one attempt.
func (w *DeliverWebhookWorker) Work(ctx context.Context, job *river.Job[DeliverWebhookArgs]) error {
	return w.Deliverer.Deliver(ctx, job.Args.DeliveryID, job.Attempt >= job.MaxAttempts)
}
