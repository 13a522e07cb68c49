package handlers

import (
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/notify"
)

// FuzzCheckWebhook: whatever is sent, checkWebhook does not panic, every
// error names one of the form's fields, and what it accepts fits the
// table's checks (migration 0028).
func FuzzCheckWebhook(f *testing.F) {
	f.Add("https://example.com/hook", "sixteen bytes or more", "benchmark.finished,run.regression", "")
	f.Add("http://10.0.0.1/", "short", "x,x", "xml")
	f.Add("https://e.com", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "", "slack")
	fields := []string{"url", "secret", "events", "format"}
	f.Fuzz(func(t *testing.T, url, secret, events, format string) {
		var evs []string
		if events != "" {
			evs = strings.Split(events, ",")
		}
		w, errs := checkWebhook(i18n.Default().Lang("en"), notify.Guard{}, webhookRequest{URL: url, Secret: secret, Events: evs, Format: format})
		for k, m := range errs {
			if !slices.Contains(fields, k) || m == "" {
				t.Fatalf("error %q: %q", k, m)
			}
		}
		if errs != nil {
			return
		}
		if len(w.URL) == 0 || len(w.URL) > 2048 || len(w.Secret) < 16 || len(w.Secret) > 256 || len(w.Events) < 1 || len(w.Events) > 3 ||
			(w.Format != "json" && w.Format != "slack") {
			t.Fatalf("accepted %+v", w)
		}
		for i, e := range w.Events {
			if !slices.Contains(notify.Events, e) || slices.Contains(w.Events[:i], e) {
				t.Fatalf("accepted events %v", w.Events)
			}
		}
	})
}
