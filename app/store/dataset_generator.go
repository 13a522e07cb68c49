package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
)

// SetDatasetGenerator records the spec a synthetic dataset was generated
// from; call in the transaction that creates it.
func (q *Queries) SetDatasetGenerator(ctx context.Context, id int64, spec json.RawMessage) error {
	_, err := q.db.Exec(ctx, `UPDATE datasets SET generator = @spec WHERE id = @id`,
		pgx.NamedArgs{"id": id, "spec": string(spec)})
	return mapErr(err, "set dataset generator")
}

// DatasetGenerator returns the spec a dataset the viewer may see was
// generated from; nil for an uploaded dataset.
func (q *Queries) DatasetGenerator(ctx context.Context, v Viewer, id int64) (json.RawMessage, error) {
	var spec *string
	err := q.db.QueryRow(ctx, `SELECT d.generator::text FROM datasets d WHERE d.id = @id AND `+visibleTo,
		pgx.NamedArgs{"id": id, "viewer": v.UserID, "admin": v.Admin}).Scan(&spec)
	if err != nil || spec == nil {
		return nil, mapErr(err, "dataset generator")
	}
	return json.RawMessage(*spec), nil
}
