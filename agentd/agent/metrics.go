package agent

import (
	"context"
	"log/slog"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ruckus/ruckus/agentd/load"
	"github.com/ruckus/ruckus/app/metrics"
	"github.com/ruckus/ruckus/jobs"
)

// errorClasses are the classes a failed request is counted under
// (jobs/record.go); anything else counts as "other", so that the series
// stay few whatever a runtime answers.
var errorClasses = []string{jobs.ErrConnect, jobs.ErrTimeout, jobs.ErrHTTP4xx, jobs.ErrHTTP429, jobs.ErrHTTP5xx,
	jobs.ErrDisconnect, jobs.ErrMalformed, jobs.ErrStall, jobs.ErrCancelled, jobs.ErrRuntime, jobs.ErrInvalidReq}

// agentMetrics is what agentd exposes on --metrics-addr: the requests it
// has in flight to the runtime, those it has sent (their rate is the send
// rate), and the failed ones by error class.
type agentMetrics struct {
	registry *prometheus.Registry
	inFlight prometheus.Gauge
	sent     *prometheus.CounterVec
	errors   *prometheus.CounterVec
}

func newAgentMetrics() *agentMetrics {
	m := &agentMetrics{
		registry: prometheus.NewRegistry(),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentd_requests_in_flight", Help: "Requests sent to the runtime and not yet answered.",
		}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentd_requests_sent_total", Help: "Requests sent to the runtime, by phase (warmup or measured); rate() of it is the send rate.",
		}, []string{"phase"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentd_request_errors_total", Help: "Requests that failed, by error class (jobs/record.go; \"other\" for any other).",
		}, []string{"class"}),
	}
	for _, c := range errorClasses {
		m.errors.WithLabelValues(c)
	}
	m.sent.WithLabelValues("measured")
	m.registry.MustRegister(m.inFlight, m.sent, m.errors, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// sending counts a request leaving; call the function it returns with the
// request's result when it comes back. Safe on a nil *agentMetrics.
func (m *agentMetrics) sending(phase string) func(jobs.Result) {
	if m == nil {
		return func(jobs.Result) {}
	}
	if phase != load.PhaseWarmup {
		phase = "measured"
	}
	m.sent.WithLabelValues(phase).Inc()
	m.inFlight.Inc()
	return func(r jobs.Result) {
		m.inFlight.Dec()
		if r.Status != jobs.StatusError {
			return
		}
		class := r.ErrorClass
		if !slices.Contains(errorClasses, class) {
			class = "other"
		}
		m.errors.WithLabelValues(class).Inc()
	}
}

// serveMetrics serves m on addr until ctx ends; an address that cannot be
// opened stops the agent at start, but one another process holds (another
// agent on this node) is a warning: the agent works without metrics.
func serveMetrics(ctx context.Context, addr string, m *agentMetrics, logger *slog.Logger) error {
	ln, err := metrics.Listen(addr)
	if metrics.Taken(err) {
		logger.Warn("metrics port taken: working without /metrics (--metrics-addr another port, or empty for none)", "addr", addr, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	logger.Info("metrics listening", "addr", ln.Addr().String())
	go func() {
		if err := metrics.Serve(ctx, ln, m.registry, logger); err != nil {
			logger.Error("metrics server stopped", "err", err)
		}
	}()
	return nil
}
