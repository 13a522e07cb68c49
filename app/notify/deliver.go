package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/ruckus/ruckus/app/store"
)

// Headers of a delivery.
const (
	SignatureHeader = "X-Ruckus-Signature"
	EventHeader     = "X-Ruckus-Event"
	DeliveryHeader  = "X-Ruckus-Delivery"
)

// DeliveryStore is what sending reads and records.
type DeliveryStore interface {
	DeliveryToSend(ctx context.Context, id int64) (store.PendingDelivery, error)
	RecordDeliveryAttempt(ctx context.Context, id int64, state string, status *int, errText string) error
}

// Deliverer sends deliveries.
type Deliverer struct {
	Store  DeliveryStore
	Guard  Guard
	Client *http.Client
	// Version goes in the User-Agent.
	Version string
}

// NewDeliverer sends with guard's client, each attempt within timeout.
func NewDeliverer(st DeliveryStore, guard Guard, timeout time.Duration, version string) *Deliverer {
	return &Deliverer{Store: st, Guard: guard, Client: guard.Client(timeout), Version: version}
}

// Sign is the signature header's value for body: sha256=<hex HMAC-SHA256
// of the body with the secret>.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Body is what the webhook receives for payload, in its format: the event
// as JSON, or Slack's {"text": …}.
func Body(format string, payload []byte) ([]byte, error) {
	if format != "slack" {
		return payload, nil
	}
	var ev Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("read the event: %w", err)
	}
	return json.Marshal(map[string]string{"text": ev.Text})
}

// Deliver makes one attempt at delivery id (attempt of final, the last
// one River makes), records it, and returns an error when it must be
// tried again. A delivery whose webhook was deleted, or that went through
// already, is not sent.
func (d *Deliverer) Deliver(ctx context.Context, id int64, final bool) error {
	p, err := d.Store.DeliveryToSend(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && p.State != "pending" {
		return nil
	}
	if err != nil {
		return err
	}
	status, sendErr := d.send(ctx, p)
	state := "delivered"
	msg := ""
	if sendErr != nil {
		msg, state = failure(sendErr), "pending"
		if final {
			state = "failed"
		}
	}
	if err := d.Store.RecordDeliveryAttempt(context.WithoutCancel(ctx), id, state, status, msg); err != nil {
		return errors.Join(sendErr, err)
	}
	return sendErr
}

func (d *Deliverer) send(ctx context.Context, p store.PendingDelivery) (*int, error) {
	if err := d.Guard.CheckURL(p.URL); err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	body, err := Body(p.Format, p.Payload)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Ruckus-Webhook/"+d.Version)
	req.Header.Set(SignatureHeader, Sign(p.Secret, body))
	req.Header.Set(EventHeader, p.Event)
	req.Header.Set(DeliveryHeader, strconv.FormatInt(p.ID, 10))
	res, err := d.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	status := res.StatusCode
	if status < 200 || status > 299 {
		return &status, fmt.Errorf("the receiver answered %s", res.Status)
	}
	return &status, nil
}

// failure is what a delivery's owner reads of why it failed. A name that
// does not resolve is said as such: the resolver's own error names the
// server's resolver (its address and port), which is none of the user's
// business, whatever name they type.
func failure(err error) string {
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) {
		return err.Error()
	}
	switch {
	case dnsErr.IsNotFound:
		return fmt.Sprintf("the host name %s does not resolve", dnsErr.Name)
	case dnsErr.IsTimeout:
		return fmt.Sprintf("looking up the host name %s timed out", dnsErr.Name)
	default:
		return fmt.Sprintf("the host name %s could not be looked up", dnsErr.Name)
	}
}
