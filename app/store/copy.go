package store

import (
	"context"
	"errors"
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
	return copySeq2(ctx, q, table, cols, func(yield func(T, error) bool) {
		for v := range seq {
			if !yield(v, nil) {
				return
			}
		}
	}, fill)
}

// copySeq2 is copySeq over a sequence that may fail: an error it yields
// ends the COPY, and is what copySeq2 returns. PostgreSQL answers an
// aborted COPY with an error of its own that does not wrap the reason, so
// a caller would otherwise lose the line and field a parser named.
func copySeq2[T any](ctx context.Context, q *Queries, table string, cols []string, seq iter.Seq2[T, error], fill func(T, []any)) (int64, error) {
	next, stop := iter.Pull2(seq)
	defer stop()
	row := make([]any, len(cols))
	src := &copyRows{next: func() ([]any, bool, error) {
		v, err, ok := next()
		if !ok {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		fill(v, row)
		return row, true, nil
	}}
	n, err := q.db.CopyFrom(ctx, pgx.Identifier{table}, cols, src)
	if src.err != nil {
		return n, sourceErr{src.err}
	}
	return n, err
}

// sourceErr is an error a copied sequence yielded; copyErr hands it back
// as it came.
type sourceErr struct{ err error }

func (e sourceErr) Error() string { return e.err.Error() }

func (e sourceErr) Unwrap() error { return e.err }

// copyErr is a copy's error: the sequence's own as it yielded it, else
// PostgreSQL's mapped (mapErr) and named by what.
func copyErr(err error, what string) error {
	var se sourceErr
	if errors.As(err, &se) {
		return se.err
	}
	return mapErr(err, what)
}
