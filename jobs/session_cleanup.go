package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// ServerQueue is the queue the server's own workers use.
const ServerQueue = "server"

// SessionCleanupArgs removes expired sessions; the server runs it
// periodically.
type SessionCleanupArgs struct{}

// Kind is the job kind, stable across versions.
func (SessionCleanupArgs) Kind() string { return "session_cleanup" }

// InsertOpts puts the job on the server's queue.
func (SessionCleanupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ServerQueue, UniqueOpts: river.UniqueOpts{ByPeriod: 30 * time.Minute}}
}

// SessionDeleter is the part of the store the worker needs.
type SessionDeleter interface {
	DeleteExpiredSessions(ctx context.Context) (int64, error)
}

// SessionCleanupWorker deletes sessions past their expiry.
type SessionCleanupWorker struct {
	river.WorkerDefaults[SessionCleanupArgs]
	Store SessionDeleter
}

// Work deletes the expired sessions.
func (w *SessionCleanupWorker) Work(ctx context.Context, _ *river.Job[SessionCleanupArgs]) error {
	_, err := w.Store.DeleteExpiredSessions(ctx)
	return err
}
