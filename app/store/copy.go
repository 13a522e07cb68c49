package store

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
