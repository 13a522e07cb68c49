package sim_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/jobs"
)

func server(t *testing.T, tweak func(*sim.Config)) *openai.Client {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.OutputTokens = "const:5ms", "const:1ms", "const:12"
	if tweak != nil {
		tweak(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.NewServer(cfg, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	return &openai.Client{BaseURL: srv.URL, StallTimeout: 300 * time.Millisecond}
}

func send(t *testing.T, c *openai.Client, url string, maxTokens int) jobs.Result {
	t.Helper()
	item := `{"method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"What is 2+2?"}]}}`
	if url == "/v1/completions" {
		item = `{"method":"POST","url":"/v1/completions","body":{"prompt":"Once upon"}}`
	}
	req, err := openai.BuildRequest([]byte(item), "sim/model", jobs.Sampling{MaxTokens: maxTokens})
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(context.Background(), req)
}

func TestStreamsWithUsage(t *testing.T) {
	t.Parallel()
	c := server(t, nil)
	for _, url := range []string{"/v1/chat/completions", "/v1/completions"} {
		r := send(t, c, url, 100)
		if r.Status != jobs.StatusOK || r.CompletionTokens != 12 || r.TokensEstimated || r.ContentEvents != 12 ||
			r.FinishReason != "stop" || len(strings.Fields(r.Output)) != 12 || !strings.HasPrefix(r.RequestID, "cmpl-sim-") {
			t.Fatalf("%s: %+v", url, r)
		}
		if r.TTFT < 5*time.Millisecond || r.E2E < r.TTFT+11*time.Millisecond {
			t.Fatalf("%s: timings %v %v", url, r.TTFT, r.E2E)
		}
	}
	// max_tokens caps the answer.
	if r := send(t, c, "/v1/chat/completions", 5); r.CompletionTokens != 5 || r.FinishReason != "length" {
		t.Fatalf("capped: %+v", r)
	}
}

func TestMultiTokenEvents(t *testing.T) {
	t.Parallel()
	c := server(t, func(c *sim.Config) { c.TokensPerEvent = 3; c.OutputTokens = "const:10" })
	r := send(t, c, "/v1/chat/completions", 100)
	// 10 tokens in events of 3, 3, 3, 1; usage reports all 10.
	if r.CompletionTokens != 10 || r.ContentEvents != 4 || len(strings.Fields(r.Output)) != 10 {
		t.Fatalf("%+v", r)
	}
}

func TestFaultsAreSeenByTheClient(t *testing.T) {
	t.Parallel()
	for class, tweak := range map[string]func(*sim.Config){
		jobs.ErrHTTP5xx:    func(c *sim.Config) { c.Fault5xx = 1 },
		jobs.ErrHTTP429:    func(c *sim.Config) { c.Fault429 = 1 },
		jobs.ErrStall:      func(c *sim.Config) { c.FaultStall = 1 },
		jobs.ErrDisconnect: func(c *sim.Config) { c.FaultDisconnect = 1 },
		jobs.ErrMalformed:  func(c *sim.Config) { c.FaultMalformed = 1 },
	} {
		t.Run(class, func(t *testing.T) {
			t.Parallel()
			r := send(t, server(t, tweak), "/v1/chat/completions", 100)
			if r.Status != jobs.StatusError || r.ErrorClass != class {
				t.Fatalf("%+v, want %s", r, class)
			}
		})
	}
	// A share of faults: roughly that share of requests fail.
	c := server(t, func(c *sim.Config) { c.Fault5xx = 0.3; c.TTFT = "const:0s"; c.OutputTokens = "const:1" })
	failed := 0
	for range 200 {
		if send(t, c, "/v1/chat/completions", 10).Status == jobs.StatusError {
			failed++
		}
	}
	if failed < 30 || failed > 90 {
		t.Fatalf("%d of 200 failed with a 30%% fault share", failed)
	}
}

func TestPastItsBatchTheServerSlowsDown(t *testing.T) {
	t.Parallel()
	c := server(t, func(c *sim.Config) {
		c.Batch = 1
		c.TTFT = "const:0s"
		c.ITL = "const:4ms"
		c.OutputTokens = "const:40"
	})
	alone := send(t, c, "/v1/chat/completions", 100)
	var wg sync.WaitGroup
	res := make([]jobs.Result, 4)
	for i := range res {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = send(t, c, "/v1/chat/completions", 100) }()
	}
	wg.Wait()
	slowest := time.Duration(0)
	for _, r := range res {
		slowest = max(slowest, r.ITLMean)
	}
	if slowest < 2*alone.ITLMean {
		t.Fatalf("four at once on a batch of one: ITL %v, alone %v", slowest, alone.ITLMean)
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	_ = cfg.Validate()
	h := sim.NewServer(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, body := range []string{"{", `{"model":"m"}`} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"error"`) {
			t.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
		}
	}
}

func TestParseDist(t *testing.T) {
	for _, c := range []struct {
		in   string
		dur  bool
		mean float64 // expected sample mean, 0 to skip
		err  string
	}{
		{"const:20ms", true, 20e6, ""},
		{"uniform:10ms,30ms", true, 20e6, ""},
		{"normal:200,20", false, 200, ""},
		{"exp:10ms", true, 10e6, ""},
		{"lognormal:100ms,0.5", true, 100e6 * math.Exp(0.125), ""},
		{"const:20", true, 0, "not a duration"},
		{"normal:1", false, 0, "needs 2"},
		{"uniform:30ms,10ms", true, 0, "non-negative"},
		{"zipf:1", false, 0, "unknown distribution"},
		{"20ms", true, 0, "KIND:PARAMS"},
		{"const:1,2", false, 0, "takes 1"},
	} {
		d, err := sim.ParseDist(c.in, c.dur)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		sum := 0.0
		for range 20000 {
			sum += d.Sample(r)
		}
		if got := sum / 20000; math.Abs(got-c.mean)/c.mean > 0.03 {
			t.Errorf("%s: mean %g, want %g", c.in, got, c.mean)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.ITL, cfg.Fault429, cfg.Batch = "fast", 2, 0
	err := cfg.Validate()
	for _, want := range []string{"--sim-itl", "--sim-fault-429", "--sim-batch"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"const:20ms", "uniform:1,2", "lognormal:1s,0.3", "exp:", "normal:,", ":"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, dur bool) {
		d, err := sim.ParseDist(s, dur)
		if err != nil {
			return
		}
		v := d.Sample(rand.New(rand.NewPCG(1, 1)))
		if v < 0 || math.IsNaN(v) {
			t.Fatalf("%q sampled %v", s, v)
		}
	})
}
