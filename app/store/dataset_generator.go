package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
)

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
