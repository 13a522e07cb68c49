package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ruckus/ruckus/app/metrics"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// scrape reads a /metrics endpoint into series → value: name{labels,
// sorted}; a histogram gives its name_count and name_sum.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("scrape %s: %s", url, res.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(ls)
			key := name
			if len(ls) > 0 {
				key += "{" + strings.Join(ls, ",") + "}"
			}
			switch {
			case m.GetHistogram() != nil:
				out[name+"_count"] = float64(m.GetHistogram().GetSampleCount())
				out[name+"_sum"] = m.GetHistogram().GetSampleSum()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			default:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// own lists the series whose names begin with prefix, one a line.
func own(series map[string]float64, prefix string) string {
	var lines []string
	for k, v := range series {
		if strings.HasPrefix(k, prefix) {
			lines = append(lines, fmt.Sprintf("%s %g", k, v))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Both metrics endpoints follow a run: the server's queue depth and runs
// by state, lease latency and run duration; the agent's requests sent, in
// flight and failed by class, which agree with what the run recorded.
func TestMetricsMoveWithARun(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := metrics.NewServer(ctx, w.st, pool, 3*time.Second, logger)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = metrics.Serve(ctx, ln, srv.Registry, logger) }()
	server := "http://" + ln.Addr().String() + "/metrics"
	queue := jobs.Queue("cpu", "sim")
	depth := fmt.Sprintf(`ruckus_queue_depth{hardware_profile="cpu",queue=%q,runtime="sim"}`, queue)

	before := scrape(t, server)
	if before[`ruckus_runs{state="queued"}`] != 0 || before[depth] != 0 || before[`ruckus_agents{state="online"}`] != 0 {
		t.Fatalf("before any run: %v", before)
	}
	// The agent registers (the profile exists then), and is drained so
	// that the run waits in its queue.
	agentAddr := freeAddr(t)
	agent := "http://" + agentAddr + "/metrics"
	startAgent(t, w.agentURL("node-m"), "node-m", "--metrics-addr", agentAddr, "--sim-ttft", "const:1s", "--sim-fault-429", "0.3")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	agentID := mustAgents(t, w)[0].ID
	if err := w.st.SetAgentDrained(ctx, agentID, true); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the agent drained", func() bool { return scrape(t, server)[`ruckus_agents{state="drained"}`] == 1 })
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4})
	queued := scrape(t, server)
	if queued[`ruckus_runs{state="queued"}`] != 1 || queued[depth] != 1 {
		t.Fatalf("a run waiting for an agent: runs queued %v, %s %v", queued[`ruckus_runs{state="queued"}`], depth, queued[depth])
	}
	if err := w.st.SetAgentDrained(ctx, agentID, false); err != nil {
		t.Fatal(err)
	}
	var during, agentDuring map[string]float64
	testkit.WaitWithin(t, 60*time.Second, "the run under way on both endpoints", func() bool {
		during = scrape(t, server)
		if during[`ruckus_runs{state="running"}`] != 1 {
			return false
		}
		res, err := http.Get(agent)
		if err != nil {
			return false
		}
		res.Body.Close()
		agentDuring = scrape(t, agent)
		return agentDuring["agentd_requests_in_flight"] > 0
	})
	if during[depth] != 0 || during[`ruckus_agents{state="online"}`] != 1 || during["ruckus_run_lease_latency_seconds_count"] != 1 {
		t.Fatalf("during the run: depth %v, agents online %v, leases %v", during[depth], during[`ruckus_agents{state="online"}`], during["ruckus_run_lease_latency_seconds_count"])
	}
	t.Logf("server during the run:\n%s\nagent during the run:\n%s", own(during, "ruckus_"), own(agentDuring, "agentd_"))
	if n := agentDuring["agentd_requests_in_flight"]; n > 4 {
		t.Fatalf("%v requests in flight at concurrency 4", n)
	}

	testkit.WaitWithin(t, 60*time.Second, "the run to end", func() bool { s := w.run(id).State; return s == "completed" || s == "failed" })
	r := w.run(id)
	after := scrape(t, server)
	agentAfter := scrape(t, agent)
	if after[`ruckus_runs{state="`+r.State+`"}`] != 1 || after[`ruckus_runs{state="running"}`] != 0 || after["ruckus_run_duration_seconds_count"] != 1 ||
		after["ruckus_run_duration_seconds_sum"] < 1 {
		t.Fatalf("after the run (%s): %v", r.State, after)
	}
	if agentAfter[`agentd_requests_sent_total{phase="measured"}`] != 20 || agentAfter["agentd_requests_in_flight"] != 0 {
		t.Fatalf("agent after the run: sent %v, in flight %v", agentAfter[`agentd_requests_sent_total{phase="measured"}`], agentAfter["agentd_requests_in_flight"])
	}
	if got := agentAfter[`agentd_request_errors_total{class="http_429"}`]; got != float64(r.Errors) || got == 0 {
		t.Fatalf("agent counted %v http_429 errors, the run recorded %d", got, r.Errors)
	}
	if after[`ruckus_db_pool_connections{state="idle"}`]+after[`ruckus_db_pool_connections{state="acquired"}`] < 1 || after["ruckus_db_pool_acquires_total"] <= before["ruckus_db_pool_acquires_total"] {
		t.Fatalf("database pool: %v", after)
	}
}
