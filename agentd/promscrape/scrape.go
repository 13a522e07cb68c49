package promscrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

const (
	// maxBody bounds an exposition; a runtime's is a few hundred KiB, and
	// each malformed line Parse skips costs a parse of the whole body.
	maxBody = 8 << 20
	// DefaultInterval is the Scraper's interval when none is set.
	DefaultInterval = 5 * time.Second
	// minTimeout is the least time one scrape is given.
	minTimeout = 2 * time.Second
)

// accept asks for the classic text format, not OpenMetrics (whose
// exemplars Parse does not read).
const accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Scrape GETs a Prometheus text-format endpoint and maps it to a Snapshot.
// A nil client uses one with a 10 s timeout. It fails on a transport error,
// a non-2xx status, a body over 8 MiB or MaxSamples samples, or a body of
// which no line parses or too many do not; malformed lines among good ones
// are counted in Snapshot.Malformed.
func Scrape(ctx context.Context, client *http.Client, url string) (Snapshot, error) {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Snapshot{}, fmt.Errorf("promscrape: %w", err)
	}
	req.Header.Set("Accept", accept)
	res, err := client.Do(req)
	if err != nil {
		return Snapshot{}, fmt.Errorf("promscrape: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return Snapshot{}, fmt.Errorf("promscrape: GET %s: %s", url, res.Status)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1))
	if err != nil {
		return Snapshot{}, fmt.Errorf("promscrape: GET %s: %w", url, err)
	}
	at := time.Now()
	if len(body) > maxBody {
		return Snapshot{}, fmt.Errorf("promscrape: GET %s: exposition over %d bytes", url, maxBody)
	}
	samples, err := Parse(body)
	malformed := 0
	if errors.Is(err, ErrTooManySamples) {
		return Snapshot{}, fmt.Errorf("promscrape: GET %s: %w", url, err)
	}
	if err != nil {
		var synErr *SyntaxError
		if !errors.As(err, &synErr) || len(samples) == 0 {
			return Snapshot{}, fmt.Errorf("promscrape: GET %s: not Prometheus text format: %w", url, err)
		}
		malformed = synErr.Count
	}
	snap := FromSamples(samples)
	snap.At, snap.Malformed = at, malformed
	return snap, nil
}

// Scraper scrapes one endpoint every Interval while a run lasts.
type Scraper struct {
	// Client is used for every scrape; nil means Scrape's default.
	Client *http.Client
	URL    string
	// Interval between scrapes (DefaultInterval when zero); one scrape
	// may take as long, two seconds at least.
	Interval time.Duration
	// Logger gets the first failure only; nil discards.
	Logger *slog.Logger
}

// ScrapeStats counts a Scraper's scrapes.
type ScrapeStats struct {
	OK, Failed int
	// LastErr is the latest failure, nil when none failed.
	LastErr error
}

// Run scrapes at once and then every Interval until ctx ends, handing each
// snapshot to fn (in Run's goroutine, so fn should be quick). Failures are
// counted, and only the first is logged, since an endpoint that fails
// tends to keep failing; the run goes on without metrics. A scrape that
// ctx cuts short is not counted.
func (s *Scraper) Run(ctx context.Context, fn func(Snapshot)) ScrapeStats {
	logger := s.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	timeout := max(interval, minTimeout)
	if fn == nil {
		fn = func(Snapshot) {}
	}
	var stats ScrapeStats
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, timeout)
		snap, err := Scrape(sctx, s.Client, s.URL)
		cancel()
		switch {
		case ctx.Err() != nil:
			return stats
		case err != nil:
			stats.Failed++
			stats.LastErr = err
			if stats.Failed == 1 {
				logger.Warn("metrics scrape failed; later failures are counted, not logged", "url", s.URL, "err", err)
			}
		default:
			stats.OK++
			fn(snap)
		}
		select {
		case <-ctx.Done():
			return stats
		case <-tick.C:
		}
	}
}
