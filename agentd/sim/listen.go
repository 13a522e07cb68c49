package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// shutdownGrace is how long answers in progress may finish once serving
// ends; then they are cut.
const shutdownGrace = 5 * time.Second

// ListenAndServe validates cfg, listens on addr (such as 127.0.0.1:0),
// reports the address it got to ready (when not nil) and serves the
// simulated runtime until ctx ends. It then stops taking connections,
// lets answers in progress finish for a few seconds, cuts the rest and
// returns nil. A nil logger discards.
func ListenAndServe(ctx context.Context, addr string, cfg Config, logger *slog.Logger, ready func(addr string)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	// Requests' contexts end when the grace period does, so generation
	// stops.
	base, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	srv := &http.Server{
		Handler:           NewServer(cfg, logger),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-served:
		return fmt.Errorf("sim: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		cut()
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("sim: serve: %w", err)
	}
	return nil
}

// Listen runs ListenAndServe in the background and returns once it
// listens: the address, and a channel that receives ListenAndServe's
// result after ctx ends. An error before listening (a bad cfg, the
// address in use) is returned at once.
func Listen(ctx context.Context, addr string, cfg Config, logger *slog.Logger) (string, <-chan error, error) {
	got := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- ListenAndServe(ctx, addr, cfg, logger, func(a string) { got <- a }) }()
	select {
	case a := <-got:
		return a, done, nil
	case err := <-done:
		select {
		case a := <-got: // it listened, and ctx has already ended
			done <- err
			return a, done, nil
		default:
			return "", nil, err
		}
	}
}
