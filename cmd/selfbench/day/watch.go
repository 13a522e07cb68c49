package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// recorder counts the users' answers by status class, and keeps each 5xx.
type recorder struct {
	mu        sync.Mutex
	requests  int
	byClass   map[int]int
	fivexx    []string // "503 GET /x (during the PostgreSQL restart)"
	unreached int      // no answer: the server was being restarted
	unexpect  []string // a user's step that did not get what it should
}

func newRecorder() *recorder { return &recorder{byClass: map[int]int{}} }

// answered records one answer; fault names the fault under way, if any.
func (r *recorder) answered(method, path string, status int, fault string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.byClass[status/100]++
	if status >= 500 {
		msg := fmt.Sprintf("%d %s %s", status, method, path)
		if fault != "" {
			msg += " (during " + fault + ")"
		}
		r.fivexx = append(r.fivexx, msg)
	}
}

func (r *recorder) noAnswer() { r.mu.Lock(); r.unreached++; r.mu.Unlock() }

// wrong records a step whose answer was not what it should have been
// (not a 5xx: a 4xx where a 2xx was due, or the other way round).
func (r *recorder) wrong(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unexpect) < 200 {
		r.unexpect = append(r.unexpect, msg)
	}
}

// receiver is the users' webhook endpoint: /hook/USER, each user's
// webhook with its own secret. It checks every signature.
type receiver struct {
	srv  *http.Server
	url  string
	mu   sync.Mutex
	keys map[string]string // user path → secret
	// got: benchmark id → deliveries received with a good signature.
	got      map[int64]int
	received int
	badSig   int
	badBody  int
}

func newReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String(), keys: map[string]string{}, got: map[int64]int{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) register(path, secret string) {
	r.mu.Lock()
	r.keys[path] = secret
	r.mu.Unlock()
}

// ServeHTTP checks X-Ruckus-Signature (sha256=HMAC of the raw body,
// docs/operations.md#webhooks) and counts the delivery by benchmark.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received++
	secret, ok := r.keys[req.URL.Path]
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if err != nil || !ok || !hmac.Equal([]byte(want), []byte(req.Header.Get("X-Ruckus-Signature"))) {
		r.badSig++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var ev struct {
		Benchmark struct {
			ID int64 `json:"id"`
		} `json:"benchmark"`
	}
	if json.Unmarshal(body, &ev) != nil || ev.Benchmark.ID == 0 {
		r.badBody++
	} else {
		r.got[ev.Benchmark.ID]++
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) close() { _ = r.srv.Close() }

// scraper reads both /metrics endpoints every second and checks each
// answer: 200, parseable, and (the server's) labelled only with real
// methods and route patterns.
type scraper struct {
	mu       sync.Mutex
	scrapes  map[string]int
	non200   map[string]int
	unparsed map[string]int
	badLabel []string
	down     int      // no answer while the server was being restarted
	failures []string // what each failed scrape got
}

// failed records a failed scrape; s.mu is held.
func (s *scraper) failed(name, what string) {
	s.non200[name]++
	if len(s.failures) < 10 {
		s.failures = append(s.failures, time.Now().Format("15:04:05")+" "+name+": "+what)
	}
}

var (
	methods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}
	// A route pattern as Fiber writes it: literal segments and :params
	// (with an optional <int>), never a request's own id.
	routeRE = regexp.MustCompile(`^(/|(/([a-z][a-z0-9._-]*|:[a-z]+(<int>)?|\*))+)$`)
)

func newScraper() *scraper {
	return &scraper{scrapes: map[string]int{}, non200: map[string]int{}, unparsed: map[string]int{}}
}

// loop scrapes every second until ctx ends; down says whether a failed
// connection is expected (the server restarting).
func (s *scraper) loop(ctx context.Context, targets map[string]string, down func(string) bool) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		for name, url := range targets {
			s.scrape(ctx, client, name, url, func() bool { return down(name) })
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *scraper) scrape(ctx context.Context, client *http.Client, name, url string, down func() bool) {
	// A restart may begin while the scrape is under way: it is expected
	// to fail if one was under way before it or is after it.
	maybeDown := down()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := client.Do(req)
	maybeDown = maybeDown || down()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		s.scrapes[name]++
		if maybeDown {
			s.down++
		} else {
			s.failed(name, err.Error())
		}
		return
	}
	defer res.Body.Close()
	s.scrapes[name]++
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		s.failed(name, fmt.Sprintf("%d %s", res.StatusCode, strings.Join(strings.Fields(string(body)), " ")))
		return
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		s.unparsed[name]++
		return
	}
	if name == "server" {
		s.checkLabels(families)
	}
}

// checkLabels keeps every method or route label that is not a real one.
func (s *scraper) checkLabels(families map[string]*dto.MetricFamily) {
	for fname, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				bad := l.GetName() == "method" && !methods[l.GetValue()] ||
					l.GetName() == "route" && l.GetValue() != "unmatched" && !routeRE.MatchString(l.GetValue())
				if bad && len(s.badLabel) < 50 {
					s.badLabel = append(s.badLabel, fmt.Sprintf("%s{%s=%q}", fname, l.GetName(), l.GetValue()))
				}
			}
		}
	}
}

// totals is the scrapes and their failures over both endpoints.
func (s *scraper) totals() (scrapes, non200, unparsed int, names string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ns []string
	for n, c := range s.scrapes {
		scrapes += c
		ns = append(ns, fmt.Sprintf("%s %d", n, c))
	}
	for _, c := range s.non200 {
		non200 += c
	}
	for _, c := range s.unparsed {
		unparsed += c
	}
	sort.Strings(ns)
	return scrapes, non200, unparsed, strings.Join(ns, ", ")
}
