// Package riverlog is the logger River's clients are given: River's own
// lines as they come, but its per-queue "Producer job counts", which it
// logs at info level every few seconds while jobs run, at debug level, so
// that `make run`'s log keeps the lines a person reads
// (docs/development.md).
package riverlog

import (
	"context"
	"log/slog"
	"strings"
)

// chatty is the suffix of River's producers' periodic count line
// ("producer: Producer job counts", river's producer.go).
const chatty = ": Producer job counts"

// New returns a logger writing through l's handler with River's periodic
// job counts lowered to debug.
func New(l *slog.Logger) *slog.Logger { return slog.New(handler{l.Handler()}) }

// handler lowers the chatty record's level before the inner handler
// decides whether to keep it.
type handler struct{ inner slog.Handler }

func (h handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && strings.HasSuffix(r.Message, chatty) {
		if !h.inner.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.inner.Handle(ctx, r)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{h.inner.WithAttrs(attrs)}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.inner.WithGroup(name)} }
