package store

import (
	"context"
	"iter"

	"github.com/jackc/pgx/v5"
)

// copyRows is a pgx.CopyFromSource over a function that returns the next
// row's values, false at the end, or an error that aborts the COPY. It
// lets a caller stream a parse straight into PostgreSQL (dataset uploads,
// imported results): one row is in memory at a time.
type copyRows struct {
	next func() ([]any, bool, error)
	cur  []any
	err  error
}

func (s *copyRows) Next() bool {
	row, ok, err := s.next()
	if err != nil {
		s.err = err
		return false
	}
	s.cur = row
	return ok
}

func (s *copyRows) Values() ([]any, error) { return s.cur, nil }

func (s *copyRows) Err() error { return s.err }

// copySeq writes the rows a sequence yields into table with COPY: the
// values of one row are fill's, into a slice reused between rows.
func copySeq[T any](ctx context.Context, q *Queries, table string, cols []string, seq iter.Seq[T], fill func(T, []any)) (int64, error) {
	next, stop := iter.Pull(seq)
	defer stop()
	row := make([]any, len(cols))
	src := &copyRows{next: func() ([]any, bool, error) {
		v, ok := next()
		if !ok {
			return nil, false, nil
		}
		fill(v, row)
		return row, true, nil
	}}
	return q.db.CopyFrom(ctx, pgx.Identifier{table}, cols, src)
}
