package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ResultKey is where a page of results ends: the run, the item and its
// sample, the order of the results' primary key.
type ResultKey struct {
	RunID  int64
	Idx    int
	Sample int
}

// ResultsAfter returns at most limit results of the given runs that come
// after key in (run_id, idx, sample) order, keyset-paged over the primary
// key: every page costs the same however deep it is.
func (q *Queries) ResultsAfter(ctx context.Context, runIDs []int64, after ResultKey, limit int) ([]ResultRow, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+resultColumns+resultFrom+`WHERE r.run_id = ANY(@runs)
			AND (r.run_id, r.idx, r.sample) > (@run, @idx, @sample)
		ORDER BY r.run_id, r.idx, r.sample LIMIT @limit`,
		pgx.NamedArgs{"runs": runIDs, "run": after.RunID, "idx": after.Idx, "sample": after.Sample, "limit": max(limit, 1)})
	out, err := pgx.CollectRows(rows, scanResult)
	return out, mapErr(err, "results after")
}
