// Package metrics exposes Ruckus's own state to Prometheus: the server's
// queues, runs, agents, request durations and database pool, read at
// scrape time, and the HTTP endpoint both the server and agentd serve
// them on (a listen address of its own, off the public port).
//
// The examples/ folder holds a KEDA ScaledObject and a HorizontalPodAutoscaler
// that scale agents on ruckus_queue_depth (docs/operations.md#prometheus-metrics).
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// QueueDepthMetric is the metric an autoscaler scales agents on: River
// jobs waiting for an agent, per queue and hardware profile.
const QueueDepthMetric = "ruckus_queue_depth"

// waiting are the River job states of work not yet taken by an agent.
var waiting = map[string]bool{"available": true, "scheduled": true, "retryable": true, "pending": true}

// Source is what the server's collector reads at scrape time.
type Source interface {
	QueueCounts(ctx context.Context) ([]store.QueueCount, error)
	RunStateCounts(ctx context.Context) (map[string]int64, error)
	ListAgents(ctx context.Context) ([]store.Agent, error)
	DatabaseNow(ctx context.Context) (time.Time, error)
	RunsStartedAfter(ctx context.Context, since time.Time, limit int) ([]store.RunLapse, error)
	RunsFinishedAfter(ctx context.Context, since time.Time, limit int) ([]store.RunLapse, error)
}

// runStates and agentStates are reported even at zero, so that a graph or
// an alert sees 0 rather than no series.
var (
	runStates   = []string{"queued", "running", "completed", "failed", "cancelled"}
	agentStates = []string{store.AgentOnline, store.AgentDrained, store.AgentStale, store.AgentOffline, store.AgentDeactivated, store.AgentIncompatible}
)

// Server is the server's metrics: a registry with the collector that reads
// the database at scrape time, the request-duration histogram the web
// layer observes, and Go's process metrics.
type Server struct {
	Registry *prometheus.Registry
	requests *prometheus.HistogramVec
}

// NewServer builds the server's registry. staleAfter is when an agent's
// heartbeat counts as stale (RUCKUS_AGENT_STALE_AFTER); pool, when not
// nil, is reported as the database pool.
func NewServer(ctx context.Context, src Source, pool *pgxpool.Pool, staleAfter time.Duration, logger *slog.Logger) (*Server, error) {
	now, err := src.DatabaseNow(ctx)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	s := &Server{Registry: reg, requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ruckus_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route (as declared in the route table), method and status code.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"route", "method", "code"})}
	c := &stateCollector{src: src, staleAfter: staleAfter, logger: logger, startedSince: now, finishedSince: now,
		lease: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ruckus_run_lease_latency_seconds",
			Help:    "Time from a run being queued to an agent taking it, for runs taken since this server started.",
			Buckets: prometheus.ExponentialBuckets(0.25, 2, 16), // 0.25 s … ~2.3 h
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ruckus_run_duration_seconds",
			Help:    "Time from an agent taking a run to the run ending (completed, failed or cancelled), for runs ended since this server started.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 16), // 1 s … ~9 h
		}),
	}
	collectors := []prometheus.Collector{s.requests, c,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	if pool != nil {
		collectors = append(collectors, &poolCollector{pool: pool})
	}
	for _, col := range collectors {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return s, nil
}

// ObserveRequest records one answered request. route is the route table's
// pattern (never the raw path, so the series stay few). The registry keeps
// label values for the life of the process, so they are cloned here: a
// caller's string may be a view of a buffer its web framework reuses for
// the next request, and a label that changed under the registry would
// collide with another series and fail every later scrape.
func (s *Server) ObserveRequest(route, method string, code int, d time.Duration) {
	s.requests.WithLabelValues(strings.Clone(route), strings.Clone(method), strconv.Itoa(code)).Observe(d.Seconds())
}

var (
	queueJobsDesc = prometheus.NewDesc("ruckus_queue_jobs",
		"River jobs not yet finished, by queue, hardware profile, runtime and state (available, scheduled, retryable, pending, running).",
		[]string{"queue", "hardware_profile", "runtime", "state"}, nil)
	queueDepthDesc = prometheus.NewDesc(QueueDepthMetric,
		"River jobs waiting to be worked (available, scheduled, retryable, pending), by queue, hardware profile and runtime: what agents are scaled on.",
		[]string{"queue", "hardware_profile", "runtime"}, nil)
	runsDesc = prometheus.NewDesc("ruckus_runs",
		"Runs by state.", []string{"state"}, nil)
	agentsDesc = prometheus.NewDesc("ruckus_agents",
		"Registered agents by state (online, drained, stale, offline, deactivated, incompatible).", []string{"state"}, nil)
	scrapeErrDesc = prometheus.NewDesc("ruckus_metrics_scrape_errors",
		"1 when the last scrape could not read part of the database state (see the server log), else 0.", nil, nil)
)

// stateCollector reads the queues, runs and agents from the database at
// each scrape, and feeds the lease and duration histograms with the runs
// taken or ended since the previous scrape.
type stateCollector struct {
	src        Source
	staleAfter time.Duration
	logger     *slog.Logger

	mu            sync.Mutex
	startedSince  time.Time
	finishedSince time.Time
	lease         prometheus.Histogram
	duration      prometheus.Histogram
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueJobsDesc
	ch <- queueDepthDesc
	ch <- runsDesc
	ch <- agentsDesc
	ch <- scrapeErrDesc
	c.lease.Describe(ch)
	c.duration.Describe(ch)
}

// scrapeTimeout bounds the database reads of one scrape.
const scrapeTimeout = 10 * time.Second

// timingBatch bounds the runs read per histogram per scrape; more wait for
// the next scrape.
const timingBatch = 10_000

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	var errs []error
	errs = append(errs, c.collectQueues(ctx, ch), c.collectRuns(ctx, ch), c.collectAgents(ctx, ch), c.observeTimings(ctx))
	failed := 0.0
	if err := errors.Join(errs...); err != nil {
		failed = 1
		c.logger.Warn("metrics scrape: reading the database", "err", err)
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrDesc, prometheus.GaugeValue, failed)
	c.lease.Collect(ch)
	c.duration.Collect(ch)
}

// QueueLabels splits a queue name into its hardware profile and runtime
// (jobs.Queue); the server's own queues have neither.
func QueueLabels(queue string) (profile, runtime string) {
	i := strings.LastIndexByte(queue, '_')
	if i <= 0 {
		return "", ""
	}
	return queue[:i], queue[i+1:]
}

func (c *stateCollector) collectQueues(ctx context.Context, ch chan<- prometheus.Metric) error {
	counts, err := c.src.QueueCounts(ctx)
	if err != nil {
		return err
	}
	depth := map[string]int64{}
	for _, q := range counts {
		profile, runtime := QueueLabels(q.Queue)
		ch <- prometheus.MustNewConstMetric(queueJobsDesc, prometheus.GaugeValue, float64(q.Jobs), q.Queue, profile, runtime, q.State)
		if waiting[q.State] {
			depth[q.Queue] += q.Jobs
		} else if _, ok := depth[q.Queue]; !ok {
			depth[q.Queue] = 0
		}
	}
	for q, n := range depth {
		profile, runtime := QueueLabels(q)
		ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n), q, profile, runtime)
	}
	return nil
}

func (c *stateCollector) collectRuns(ctx context.Context, ch chan<- prometheus.Metric) error {
	counts, err := c.src.RunStateCounts(ctx)
	if err != nil {
		return err
	}
	for _, s := range runStates {
		ch <- prometheus.MustNewConstMetric(runsDesc, prometheus.GaugeValue, float64(counts[s]), s)
	}
	return nil
}

func (c *stateCollector) collectAgents(ctx context.Context, ch chan<- prometheus.Metric) error {
	as, err := c.src.ListAgents(ctx)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	now := time.Now()
	for _, a := range as {
		counts[a.Status(now, c.staleAfter, jobs.ProtocolVersion)]++
	}
	for _, s := range agentStates {
		ch <- prometheus.MustNewConstMetric(agentsDesc, prometheus.GaugeValue, float64(counts[s]), s)
	}
	return nil
}

// observeTimings adds the runs taken and ended since the last scrape to
// the histograms, moving the watermarks past them.
func (c *stateCollector) observeTimings(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	started, err := c.src.RunsStartedAfter(ctx, c.startedSince, timingBatch)
	if err != nil {
		return err
	}
	for _, t := range started {
		c.lease.Observe(t.Seconds)
		c.startedSince = t.At
	}
	finished, err := c.src.RunsFinishedAfter(ctx, c.finishedSince, timingBatch)
	if err != nil {
		return err
	}
	for _, t := range finished {
		c.duration.Observe(t.Seconds)
		c.finishedSince = t.At
	}
	return nil
}

var (
	poolConnsDesc = prometheus.NewDesc("ruckus_db_pool_connections",
		"The server's PostgreSQL connections by state (acquired: in use, idle, constructing).", []string{"state"}, nil)
	poolMaxDesc = prometheus.NewDesc("ruckus_db_pool_max_connections",
		"The most connections the server's pool opens (RUCKUS_DB_POOL_SIZE).", nil, nil)
	poolAcquiresDesc = prometheus.NewDesc("ruckus_db_pool_acquires_total",
		"Connections taken from the pool.", nil, nil)
	poolEmptyDesc = prometheus.NewDesc("ruckus_db_pool_empty_acquires_total",
		"Connections taken that had to wait for one to be free or opened.", nil, nil)
	poolWaitDesc = prometheus.NewDesc("ruckus_db_pool_acquire_wait_seconds_total",
		"Time spent waiting for a connection from the pool.", nil, nil)
)

type poolCollector struct{ pool *pgxpool.Pool }

func (p *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolConnsDesc
	ch <- poolMaxDesc
	ch <- poolAcquiresDesc
	ch <- poolEmptyDesc
	ch <- poolWaitDesc
}

func (p *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := p.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(st.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(st.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(st.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMaxDesc, prometheus.GaugeValue, float64(st.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquiresDesc, prometheus.CounterValue, float64(st.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolEmptyDesc, prometheus.CounterValue, float64(st.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaitDesc, prometheus.CounterValue, st.AcquireDuration().Seconds())
}

// Listen opens the metrics listener on addr; Serve then answers /metrics
// on it. Two steps, so that a bad address stops the program at start.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s for metrics: %w", addr, err)
	}
	return ln, nil
}

// Taken reports whether err is Listen's for an address another process
// already listens on: a second server or agent on one host, which should
// go on without metrics rather than not start (docs/metrics.md).
func Taken(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }

// Serve answers GET /metrics from g on ln until ctx ends. Nothing else is
// served there.
func Serve(ctx context.Context, ln net.Listener, g prometheus.Gatherer, logger *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn), Timeout: 30 * time.Second}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}
