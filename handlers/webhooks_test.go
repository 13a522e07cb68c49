package handlers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/handlers"
	"github.com/ruckus/ruckus/jobs"
)

// received is one request a test receiver got.
type received struct {
	path   string
	header http.Header
	body   []byte
}

// receiver is a real HTTP server that records what it gets; fail makes
// the first requests to a path answer 500.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []received
	fail map[string]int
}

func newReceiver(t *testing.T, fail map[string]int) *receiver {
	r := &receiver{fail: fail}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{path: req.URL.Path, header: req.Header.Clone(), body: b})
		failing := r.fail[req.URL.Path] > 0
		if failing {
			r.fail[req.URL.Path]--
		}
		r.mu.Unlock()
		if failing {
			http.Error(w, "not now", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// startDeliveries works the webhook queue with a real River client (retries
// after 100 ms) until the test ends, and returns the notifier that queues.
func startDeliveries(t *testing.T, e *env, guard notify.Guard) *notify.Notifier {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.DeliverWebhookWorker{Deliverer: notify.NewDeliverer(e.store, guard, 5*time.Second, "test"),
		Backoff: []time.Duration{100 * time.Millisecond}})
	rc := testkit.RiverClient(t.Context(), t, e.store.Pool(), &testkit.RiverOpts{Start: true, Config: &river.Config{Workers: workers, PollOnly: true,
		FetchPollInterval: 100 * time.Millisecond, Queues: map[string]river.QueueConfig{jobs.WebhookQueue: {MaxWorkers: 2}}}})
	return &notify.Notifier{Store: e.store, River: rc}
}

// A user subscribes a webhook through the API and a Slack one on the
// Settings page; when their benchmark finishes both are delivered to a real
// receiver, signed, the first after a failed attempt; the delivery log on
// the page and in the API says how it went; nothing is delivered twice.
func TestWebhooksAreDeliveredSignedWithRetries(t *testing.T) {
	t.Parallel()
	guard := notify.Guard{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	e := newEnv(t, func(d *handlers.Deps) { d.WebhookGuard = guard })
	ctx := context.Background()
	recv := newReceiver(t, map[string]int{"/hook": 1})
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	const secret = "a secret of more than sixteen bytes"

	created := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(fmt.Sprintf(
		`{"url":%q,"secret":%q,"events":["benchmark.finished","run.regression"]}`, recv.URL+"/hook", secret)), "application/json")
	if created.status != 201 || created.body["format"] != "json" || created.body["secret"] != nil {
		t.Fatalf("create: %d %v", created.status, created.body)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.get("/settings")
	page := c.post("/settings/webhooks", url.Values{"url": {recv.URL + "/slack"}, "secret": {secret}, "events": {"benchmark.finished", "benchmark.failed"}, "format": {"slack"}})
	if page.status != 200 || !strings.Contains(page.text(`[data-testid="webhook-saved"]`), "/slack added") || page.doc.Find(`[data-testid="webhooks"] tbody tr`).Length() != 2 {
		t.Fatalf("the settings form: %d %q", page.status, page.text(`[data-testid="webhooks-section"]`))
	}

	notifier := startDeliveries(t, e, guard)
	bID, runID := runWithResults(t, e, tok, 10, func(i int) string { return fmt.Sprint(i) })
	endRun(t, e, runID)
	// The run is flagged as a regression (against itself, which is enough
	// for its owner to be told).
	if _, err := e.store.Pool().Exec(ctx, `INSERT INTO run_regressions (run_id, metric, against_run_id, delta, detail)
		VALUES ($1, 'quality', $1, -0.25, 'paired test')`, runID); err != nil {
		t.Fatal(err)
	}
	if err := notifier.RunEnded(ctx, runID); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the three deliveries made", func() bool {
		ds, err := e.store.WebhookDeliveries(ctx, ada.ID, 10)
		return err == nil && len(ds) == 3 && ds[0].State == "delivered" && ds[1].State == "delivered" && ds[2].State == "delivered"
	})
	// Told again (another scoring of the same run): not delivered again.
	if err := notifier.RunEnded(ctx, runID); err != nil {
		t.Fatal(err)
	}

	var hook []received
	var slack received
	events := map[string]notify.Event{}
	for _, r := range recv.requests() {
		if r.path == "/hook" {
			hook = append(hook, r)
			var ev notify.Event
			if err := json.Unmarshal(r.body, &ev); err != nil {
				t.Fatalf("not JSON: %s", r.body)
			}
			events[ev.Event] = ev
		} else {
			slack = r
		}
	}
	if len(hook) != 3 {
		t.Fatalf("the JSON webhook got %d requests, want a failed one, its retry and the other event", len(hook))
	}
	for _, r := range append(hook, slack) {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(r.body)
		if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); r.header.Get("X-Ruckus-Signature") != want {
			t.Fatalf("%s: signature %q, want %q", r.path, r.header.Get("X-Ruckus-Signature"), want)
		}
		var ev struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal(r.body, &ev)
		if r.path == "/hook" && r.header.Get("X-Ruckus-Event") != ev.Event || r.header.Get("Content-Type") != "application/json" || r.header.Get("X-Ruckus-Delivery") == "" {
			t.Fatalf("%s: headers %v", r.path, r.header)
		}
	}
	fin, reg := events["benchmark.finished"], events["run.regression"]
	if fmt.Sprint(fin.Benchmark.ID) != bID || fin.Benchmark.Runs["completed"] != 1 || fin.Benchmark.Path != "/benchmarks/"+bID {
		t.Fatalf("benchmark.finished: %+v", fin)
	}
	if reg.Run == nil || reg.Run.ID != runID || len(reg.Run.Regressions) != 1 || reg.Run.Regressions[0].Metric != "quality" ||
		!strings.Contains(reg.Text, "regressed: quality -0.25 against run") {
		t.Fatalf("run.regression: %+v", reg)
	}
	var text map[string]string
	if err := json.Unmarshal(slack.body, &text); err != nil || len(text) != 1 || !strings.HasPrefix(text["text"], "Benchmark “r” (#"+bID+") finished: 1 completed") ||
		slack.header.Get("X-Ruckus-Event") != "benchmark.finished" {
		t.Fatalf("the Slack body: %s", slack.body)
	}
	last := hook[len(hook)-1]
	t.Logf("delivered as received:\nPOST %s\n%s\n\n%s", last.path, headerLines(last.header), last.body)

	// The delivery log, on the page and in the API.
	page = c.get("/settings")
	rows := page.doc.Find(`[data-testid="deliveries"] tbody tr`)
	if rows.Length() != 3 {
		t.Fatalf("the delivery log shows %d rows", rows.Length())
	}
	attempts := map[string]bool{}
	rows.Each(func(_ int, r *goquery.Selection) {
		attempts[strings.TrimSpace(r.Find(`[data-testid="delivery-state"]`).Text())+" "+strings.TrimSpace(r.Find(`[data-testid="delivery-attempts"]`).Text())] = true
	})
	if !attempts["delivered 2"] || !attempts["delivered 1"] || len(attempts) != 2 {
		t.Fatalf("the delivery log: %v", attempts)
	}
	list := e.api(http.MethodGet, "/api/v1/webhooks", tok, nil, "")
	if ws, ds := list.body["webhooks"].([]any), list.body["deliveries"].([]any); list.status != 200 || len(ws) != 2 || len(ds) != 3 {
		t.Fatalf("list: %d %v", list.status, list.body)
	}
	// Another user cannot delete ada's webhook; ada can.
	bob := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	path := fmt.Sprintf("/api/v1/webhooks/%v", created.body["webhook_id"])
	if r := e.api(http.MethodDelete, path, bob, nil, ""); r.status != 404 {
		t.Fatalf("bob deletes ada's webhook: %d", r.status)
	}
	if r := e.api(http.MethodDelete, path, tok, nil, ""); r.status != 204 {
		t.Fatalf("ada deletes her webhook: %d", r.status)
	}
	if list := e.api(http.MethodGet, "/api/v1/webhooks", tok, nil, ""); len(list.body["webhooks"].([]any)) != 1 || len(list.body["deliveries"].([]any)) != 1 {
		t.Fatalf("after the delete: %v", list.body)
	}
}

func headerLines(h http.Header) string {
	var out []string
	for _, k := range []string{"Content-Type", "User-Agent", "X-Ruckus-Delivery", "X-Ruckus-Event", "X-Ruckus-Signature"} {
		out = append(out, k+": "+h.Get(k))
	}
	return strings.Join(out, "\n")
}

// A webhook's URL is checked when it is added (a scheme, no credentials,
// no internal address written out), and a name that resolves to an
// internal address is refused when the delivery connects: the receiver
// gets nothing and the log says why.
func TestWebhooksNeverReachInternalAddresses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	for u, want := range map[string]string{
		"http://127.0.0.1:9/hook":            "127.0.0.1 is a loopback address",
		"http://[::1]/hook":                  "::1 is a loopback address",
		"https://10.1.2.3/x":                 "10.1.2.3 is a private address",
		"http://169.254.169.254/latest/meta": "169.254.169.254 is a link-local address",
		"http://[::ffff:192.168.0.1]/":       "192.168.0.1 is a private address",
		"http://user:pw@example.com/":        "must not carry a user name or password",
		"ftp://example.com/":                 "must be an http:// or https:// URL",
		"https://example.com:99999/":         "port",
	} {
		r := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(fmt.Sprintf(`{"url":%q,"secret":"sixteen bytes or more","events":["benchmark.failed"]}`, u)), "application/json")
		errs, _ := r.body["errors"].([]any)
		if r.status != 422 || len(errs) != 1 || errs[0].(map[string]any)["path"] != "url" || !strings.Contains(errs[0].(map[string]any)["message"].(string), want) {
			t.Errorf("%s: %d %v, want a url error saying %q", u, r.status, r.body, want)
		}
	}
	r := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(`{"url":"https://example.com/","secret":"short","events":["x","x"],"format":"xml"}`), "application/json")
	if errs, _ := r.body["errors"].([]any); r.status != 422 || len(errs) != 3 {
		t.Fatalf("secret, events and format: %d %v", r.status, r.body)
	}

	// localhost passes as a name, and is refused at connect time.
	recv := newReceiver(t, nil)
	port := recv.URL[strings.LastIndex(recv.URL, ":")+1:]
	created := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(fmt.Sprintf(
		`{"url":"http://localhost:%s/hook","secret":"sixteen bytes or more","events":["benchmark.finished"]}`, port)), "application/json")
	if created.status != 201 {
		t.Fatalf("a webhook to localhost by name: %d %v", created.status, created.body)
	}
	_, runID := runWithResults(t, e, tok, 3, func(i int) string { return fmt.Sprint(i) })
	endRun(t, e, runID)
	n := &notify.Notifier{Store: e.store, River: insertOnly(t, e)}
	if err := n.RunEnded(ctx, runID); err != nil {
		t.Fatal(err)
	}
	ds, err := e.store.WebhookDeliveries(ctx, ada.ID, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries: %v %v", ds, err)
	}
	d := notify.NewDeliverer(e.store, notify.Guard{}, 5*time.Second, "test")
	if err := d.Deliver(ctx, ds[0].ID, true); err == nil || !strings.Contains(err.Error(), "is a loopback address") {
		t.Fatalf("delivery to localhost: %v", err)
	}
	if len(recv.requests()) != 0 {
		t.Fatal("the receiver on loopback was reached")
	}
	ds, _ = e.store.WebhookDeliveries(ctx, ada.ID, 10)
	if ds[0].State != "failed" || ds[0].Attempts != 1 || !strings.Contains(ds[0].LastError, "loopback address") || ds[0].LastStatus != nil {
		t.Fatalf("the log: %+v", ds[0])
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if page := c.get("/settings"); !strings.Contains(page.text(`[data-testid="delivery-error"]`), "loopback address") {
		t.Fatalf("the page's log: %q", page.text(`[data-testid="deliveries"]`))
	}
}

// insertOnly is a River client that only queues.
func insertOnly(t *testing.T, e *env) *river.Client[pgx.Tx] {
	t.Helper()
	rc := testkit.RiverClient(t.Context(), t, e.store.Pool(), nil)
	return rc
}

// A benchmark none of whose runs completed is benchmark.failed, told only
// to the webhooks that subscribed to it.
func TestBenchmarkFailedIsItsOwnEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	for _, ev := range []string{"benchmark.finished", "benchmark.failed"} {
		r := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(fmt.Sprintf(
			`{"url":"https://hooks.example.com/%s","secret":"sixteen bytes or more","events":[%q]}`, ev, ev)), "application/json")
		if r.status != 201 {
			t.Fatalf("%s: %d %v", ev, r.status, r.body)
		}
	}
	_, runID := runWithResults(t, e, tok, 3, func(i int) string { return fmt.Sprint(i) })
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'failed', finished_at = now(), error = 'no request succeeded' WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	n := &notify.Notifier{Store: e.store, River: insertOnly(t, e)}
	if err := n.RunEnded(ctx, runID); err != nil {
		t.Fatal(err)
	}
	ds, err := e.store.WebhookDeliveries(ctx, ada.ID, 10)
	if err != nil || len(ds) != 1 || ds[0].Event != "benchmark.failed" || ds[0].URL != "https://hooks.example.com/benchmark.failed" || ds[0].State != "pending" {
		t.Fatalf("deliveries: %+v %v", ds, err)
	}
	var jobs int
	if err := e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'deliver_webhook' AND args->>'delivery_id' = $1`, fmt.Sprint(ds[0].ID)).Scan(&jobs); err != nil || jobs != 1 {
		t.Fatalf("delivery jobs queued: %d %v", jobs, err)
	}
}

// A benchmark cancelled whole before any agent took a run is told as
// benchmark.failed: a queued run has no agent to end and score it, so the
// cancel queues its scoring.
func TestBenchmarkCancelledWhileQueuedIsTold(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	if r := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(
		`{"url":"https://hooks.example.com/failed","secret":"sixteen bytes or more","events":["benchmark.failed"]}`), "application/json"); r.status != 201 {
		t.Fatalf("webhook: %d %v", r.status, r.body)
	}
	ds := e.upload(tok, "q.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Runtimes: []string{"sim"}, Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(fmt.Sprintf(`{"name":"c","dataset":%v,
		"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8},"repeats":2}`, ds.body["dataset_id"])), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	if r := e.api(http.MethodPost, "/api/v1/benchmarks/"+b+"/cancel", tok, nil, ""); r.status != 200 || r.body["changed"] != 2.0 {
		t.Fatalf("cancel: %d %v", r.status, r.body)
	}
	rows, err := e.store.Pool().Query(ctx, `SELECT id, (args->>'run_id')::bigint FROM river_job WHERE kind = 'score_run' AND args->>'run_id' IN
		(SELECT id::text FROM runs WHERE benchmark_id = $1) ORDER BY id`, b)
	if err != nil {
		t.Fatal(err)
	}
	type job struct{ ID, Run int64 }
	queued, err := pgx.CollectRows(rows, pgx.RowToStructByPos[job])
	if err != nil || len(queued) != 2 {
		t.Fatalf("scoring jobs of the cancelled runs: %v %v", queued, err)
	}
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store}, Stats: conclude.Keeper{Store: e.store}, Attester: e.attest,
		Notifier: &notify.Notifier{Store: e.store, River: insertOnly(t, e)}}
	for _, j := range queued {
		if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: j.ID}, Args: jobs.ScoreRunArgs{RunID: j.Run}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.store.WebhookDeliveries(ctx, ada.ID, 10)
	if err != nil || len(got) != 1 || got[0].Event != "benchmark.failed" {
		t.Fatalf("deliveries: %+v %v", got, err)
	}
}
