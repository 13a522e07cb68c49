package handlers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/views/account"
)

type webhookStore interface {
	CreateWebhook(ctx context.Context, userID int64, in store.NewWebhook) (store.Webhook, error)
	ListWebhooks(ctx context.Context, userID int64) ([]store.Webhook, error)
	DeleteWebhook(ctx context.Context, userID, id int64) error
	WebhookDeliveries(ctx context.Context, userID int64, limit int) ([]store.Delivery, error)
}

// deliveriesShown is how many of the latest deliveries the Settings page
// and the API list.
const deliveriesShown = 50

// webhookRequest is a new webhook, from the API's JSON or the form.
type webhookRequest struct {
	URL    string   `json:"url"`
	Secret string   `json:"secret"`
	Events []string `json:"events"`
	Format string   `json:"format"`
}

// checkWebhook says what is wrong with each field (url, secret, events,
// format), and returns the webhook to store when nothing is.
// The messages are in l's language: the reader's on the page, English in
// the API.
func checkWebhook(l *i18n.Localizer, g notify.Guard, r webhookRequest) (store.NewWebhook, map[string]string) {
	errs := map[string]string{}
	if err := g.CheckURL(strings.TrimSpace(r.URL)); err != nil {
		problem := err.Error()
		var coded *i18n.Error
		if errors.As(err, &coded) {
			problem = coded.In(l)
		}
		errs["url"] = l.T("form_err.webhook_url", "Problem", problem)
	}
	if n := len(r.Secret); n < 16 || n > 256 || !dataset.IsText(r.Secret) {
		errs["secret"] = l.T("form_err.webhook_secret")
	}
	events := strings.Join(notify.Events, ", ")
	switch {
	case len(r.Events) == 0:
		errs["events"] = l.T("form_err.webhook_no_event", "Events", events)
	case len(r.Events) > len(notify.Events):
		errs["events"] = l.T("form_err.webhook_many_events", "Max", len(notify.Events))
	default:
		for i, e := range r.Events {
			if !slices.Contains(notify.Events, e) {
				errs["events"] = l.T("form_err.webhook_not_event", "Event", fmt.Sprintf("%q", cut(e, 64)), "Events", events)
				break
			}
			if slices.Contains(r.Events[:i], e) {
				errs["events"] = l.T("form_err.webhook_twice", "Event", fmt.Sprintf("%q", e))
				break
			}
		}
	}
	format := r.Format
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "slack" {
		errs["format"] = l.T("form_err.webhook_format")
	}
	if len(errs) > 0 {
		return store.NewWebhook{}, errs
	}
	return store.NewWebhook{URL: strings.TrimSpace(r.URL), Secret: r.Secret, Events: r.Events, Format: format}, nil
}

// cut shortens s to at most n bytes of valid UTF-8, for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// addWebhook checks and stores the viewer's new webhook.
func (s *server) addWebhook(c *fiber.Ctx, r webhookRequest) (store.Webhook, map[string]string, error) {
	l := i18n.From(c.UserContext())
	if isAPI(c) {
		l = i18n.Default().Lang(i18n.Languages[0].Code)
	}
	in, errs := checkWebhook(l, s.WebhookGuard, r)
	if errs != nil {
		return store.Webhook{}, errs, nil
	}
	w, err := s.Store.CreateWebhook(c.UserContext(), currentUser(c).ID, in)
	if errors.Is(err, store.ErrTooManyWebhooks) {
		return w, map[string]string{"url": "You have 20 webhooks, the most allowed: delete one first."}, nil
	}
	return w, nil, err
}

// apiWebhook is a webhook in the API (never its secret).
type apiWebhook struct {
	ID        int64     `json:"webhook_id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Format    string    `json:"format"`
	CreatedAt time.Time `json:"created_at"`
}

func toAPIWebhook(w store.Webhook) apiWebhook {
	return apiWebhook{ID: w.ID, URL: w.URL, Events: w.Events, Format: w.Format, CreatedAt: w.CreatedAt}
}

// apiDelivery is a delivery in the API.
type apiDelivery struct {
	ID         int64     `json:"delivery_id"`
	WebhookID  int64     `json:"webhook_id"`
	Event      string    `json:"event"`
	State      string    `json:"state"`
	Attempts   int       `json:"attempts"`
	LastStatus *int      `json:"last_status"`
	LastError  string    `json:"last_error"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

func (s *server) apiCreateWebhook(c *fiber.Ctx) error {
	var r webhookRequest
	if errs := valid.DecodeJSON(c.Body(), &r); errs != nil {
		return fieldErrors422(c, errs)
	}
	w, errs, err := s.addWebhook(c, r)
	if err != nil {
		return err
	}
	if errs != nil {
		return apiFieldErrors(c, errs)
	}
	return c.Status(fiber.StatusCreated).JSON(toAPIWebhook(w))
}

func (s *server) apiListWebhooks(c *fiber.Ctx) error {
	u := currentUser(c)
	ws, err := s.Store.ListWebhooks(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	ds, err := s.Store.WebhookDeliveries(c.UserContext(), u.ID, deliveriesShown)
	if err != nil {
		return err
	}
	out := struct {
		Webhooks   []apiWebhook  `json:"webhooks"`
		Deliveries []apiDelivery `json:"deliveries"`
	}{Webhooks: []apiWebhook{}, Deliveries: []apiDelivery{}}
	for _, w := range ws {
		out.Webhooks = append(out.Webhooks, toAPIWebhook(w))
	}
	for _, d := range ds {
		out.Deliveries = append(out.Deliveries, apiDelivery{ID: d.ID, WebhookID: d.WebhookID, Event: d.Event, State: d.State,
			Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt})
	}
	return c.JSON(out)
}

// deleteWebhookParam deletes the viewer's webhook :id; anyone else's is
// not found.
func (s *server) deleteWebhookParam(c *fiber.Ctx) error {
	id, err := idParam(c, "id", "webhook")
	if err != nil {
		return err
	}
	err = s.Store.DeleteWebhook(c.UserContext(), currentUser(c).ID, id)
	return lookup("webhook", err)
}

func (s *server) apiDeleteWebhook(c *fiber.Ctx) error {
	if err := s.deleteWebhookParam(c); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// createWebhook is the Settings page's form.
func (s *server) createWebhook(c *fiber.Ctx) error {
	args := c.Context().PostArgs()
	var events []string
	for _, e := range args.PeekMulti("events") {
		events = append(events, string(e))
	}
	r := webhookRequest{URL: c.FormValue("url"), Secret: c.FormValue("secret"), Events: events, Format: c.FormValue("format")}
	d := account.WebhooksData{}
	w, errs, err := s.addWebhook(c, r)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if errs != nil {
		status = fiber.StatusUnprocessableEntity
		d.Form = account.WebhookForm{URL: r.URL, Events: r.Events, Format: r.Format, Errors: errs}
	} else {
		d.Saved = i18n.T(c.UserContext(), "form_err.webhook_added", "URL", w.URL)
	}
	return s.webhooksResult(c, status, d)
}

func (s *server) deleteWebhook(c *fiber.Ctx) error {
	if err := s.deleteWebhookParam(c); err != nil {
		return err
	}
	return s.webhooksResult(c, fiber.StatusOK, account.WebhooksData{})
}

// webhooksData fills the section with the viewer's webhooks and latest
// deliveries.
func (s *server) webhooksData(c *fiber.Ctx, d account.WebhooksData) (account.WebhooksData, error) {
	u := currentUser(c)
	var err error
	if d.Webhooks, err = s.Store.ListWebhooks(c.UserContext(), u.ID); err != nil {
		return d, err
	}
	if d.Deliveries, err = s.Store.WebhookDeliveries(c.UserContext(), u.ID, deliveriesShown); err != nil {
		return d, err
	}
	d.EventNames = notify.Events
	return d, nil
}

// webhooksResult answers htmx with the section alone, a plain form post
// with the whole page.
func (s *server) webhooksResult(c *fiber.Ctx, status int, d account.WebhooksData) error {
	if c.Get("HX-Request") == "" {
		return s.renderSettings(c, status, account.SettingsData{Webhooks: d})
	}
	d, err := s.webhooksData(c, d)
	if err != nil {
		return err
	}
	return render(c, status, account.WebhooksSection(d))
}
