package store

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"
)

// Dataset visibilities.
const (
	VisibilityPrivate = "private"
	VisibilityShared  = "shared"
)

// Dataset is an uploaded set of benchmark items.
type Dataset struct {
	ID            int64
	OwnerID       int64
	OwnerEmail    string
	Name          string
	Format        string
	TaskKind      string
	DefaultScorer string
	Visibility    string
	ItemCount     int
	Bytes         int64
	SHA256        string
	Starter       bool
	// Shots is how many solved examples precede each item's question
	// (k-shot prompts of the standard suites); 0 for zero-shot.
	Shots     int
	CreatedAt time.Time
	DeletedAt *time.Time
}

// DatasetItem is one item of a dataset.
type DatasetItem struct {
	Idx       int
	CustomID  string
	Request   json.RawMessage
	Reference json.RawMessage
	Category  string // "" for none
	// Shot is a suite item's prompt in pieces (dataset.Shot as JSON), nil
	// for others: what a benchmark's few-shot prompts are built from.
	Shot json.RawMessage
}

const datasetColumns = `d.id, d.owner_id, u.email, d.name, d.format, d.task_kind, d.default_scorer, d.visibility,
	d.item_count, d.bytes, d.sha256, d.starter, d.shots, d.created_at, d.deleted_at`

const datasetFrom = ` FROM datasets d JOIN users u ON u.id = d.owner_id `

func scanDataset(row pgx.CollectableRow) (Dataset, error) {
	var d Dataset
	err := row.Scan(&d.ID, &d.OwnerID, &d.OwnerEmail, &d.Name, &d.Format, &d.TaskKind, &d.DefaultScorer, &d.Visibility,
		&d.ItemCount, &d.Bytes, &d.SHA256, &d.Starter, &d.Shots, &d.CreatedAt, &d.DeletedAt)
	return d, err
}

// Viewer is who is asking: datasets are visible to their owner, to admins,
// and to everyone when shared.
type Viewer struct {
	UserID int64
	Admin  bool
}

const visibleTo = ` (d.owner_id = @viewer OR d.visibility = 'shared' OR @admin) `

// NewDataset is who a dataset being written belongs to and what it is
// called while its items go in (its totals name it at the end).
type NewDataset struct {
	OwnerID    int64
	Name       string
	Format     string
	Visibility string
	Starter    bool
}

// DatasetTotals is what is known once every item is stored. The item count
// is not among them: it is the number of rows COPY wrote.
type DatasetTotals struct {
	Name          string
	Visibility    string
	Format        string
	TaskKind      string
	DefaultScorer string
	Bytes         int64
	SHA256        string
	Shots         int
	// Generator is the spec a generated dataset was made from; nil for
	// one made from a file.
	Generator json.RawMessage
}

// errNotInTx is WriteDataset called on the pool: its writes would not be
// one transaction.
var errNotInTx = errors.New("write dataset: not in a transaction")

// WriteDataset writes a dataset in a transaction of its own; see
// (*Queries).WriteDataset.
func (s *Store) WriteDataset(ctx context.Context, nd NewDataset, items iter.Seq2[DatasetItem, error],
	totals func(q *Queries, id int64) (DatasetTotals, error)) (int64, error) {
	var id int64
	err := s.InTx(ctx, func(q *Queries) error {
		var err error
		id, err = q.WriteDataset(ctx, nd, items, totals)
		return err
	})
	return id, err
}

// WriteDataset writes a dataset in q's transaction (the caller's, which
// rolls it all back on an error): the row, then every item items yields,
// streamed with COPY so memory does not grow with the dataset, then the
// totals. totals runs once every item is in, since an upload learns its
// hash, format and counts only then and may still refuse (a duplicate, a
// setting that followed the file). An error items yields ends the copy
// and is returned as it is, not as PostgreSQL words the aborted COPY; so
// is one of totals'. It returns the dataset's id.
func (q *Queries) WriteDataset(ctx context.Context, nd NewDataset, items iter.Seq2[DatasetItem, error],
	totals func(q *Queries, id int64) (DatasetTotals, error)) (int64, error) {
	if _, ok := q.db.(pgx.Tx); !ok {
		return 0, errNotInTx
	}
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO datasets (owner_id, name, format, visibility, starter)
		VALUES (@owner, @name, @format, @visibility, @starter) RETURNING id`,
		pgx.NamedArgs{"owner": nd.OwnerID, "name": nd.Name, "format": nd.Format, "visibility": nd.Visibility, "starter": nd.Starter}).Scan(&id)
	if err != nil {
		return 0, mapErr(err, "create dataset")
	}
	n, err := copySeq2(ctx, q, "dataset_items", []string{"dataset_id", "idx", "custom_id", "request", "reference", "category", "shot"},
		items, func(it DatasetItem, row []any) {
			// json.RawMessage as string: pgx sends it as jsonb text
			// without re-encoding.
			row[0], row[1], row[2], row[3] = id, it.Idx, it.CustomID, string(it.Request)
			row[4], row[5], row[6] = nullJSON(it.Reference), nullText(it.Category), nullJSON(it.Shot)
		})
	if err != nil {
		return 0, copyErr(err, "copy dataset items")
	}
	t, err := totals(q, id)
	if err != nil {
		return 0, err
	}
	_, err = q.db.Exec(ctx, `UPDATE datasets SET name = @name, visibility = @visibility, format = @format,
		task_kind = @task_kind, default_scorer = @scorer, item_count = @count, bytes = @bytes, sha256 = @sha256,
		shots = @shots, generator = @generator WHERE id = @id`, pgx.NamedArgs{"id": id, "name": t.Name, "visibility": t.Visibility,
		"format": t.Format, "task_kind": t.TaskKind, "scorer": t.DefaultScorer, "count": n, "bytes": t.Bytes, "sha256": t.SHA256,
		"shots": t.Shots, "generator": nullJSON(t.Generator)})
	return id, mapErr(err, "finish dataset")
}

// ItemsFrom yields items for WriteDataset, without an error: items made
// in memory (a judge's prompts, a test's fixtures).
func ItemsFrom(items []DatasetItem) iter.Seq2[DatasetItem, error] {
	return func(yield func(DatasetItem, error) bool) {
		for _, it := range items {
			if !yield(it, nil) {
				return
			}
		}
	}
}

// nullText is a text value, NULL for "".
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// DatasetByID returns a dataset the viewer may see (deleted ones included,
// so past results stay readable).
func (q *Queries) DatasetByID(ctx context.Context, v Viewer, id int64) (Dataset, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+datasetColumns+datasetFrom+`WHERE d.id = @id AND `+visibleTo,
		pgx.NamedArgs{"id": id, "viewer": v.UserID, "admin": v.Admin})
	d, err := pgx.CollectExactlyOneRow(rows, scanDataset)
	return d, mapErr(err, "dataset by id")
}

// ListDatasets returns the live datasets the viewer may see, newest first.
func (q *Queries) ListDatasets(ctx context.Context, v Viewer) ([]Dataset, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+datasetColumns+datasetFrom+`WHERE d.deleted_at IS NULL AND `+visibleTo+`ORDER BY d.id DESC`,
		pgx.NamedArgs{"viewer": v.UserID, "admin": v.Admin})
	ds, err := pgx.CollectRows(rows, scanDataset)
	return ds, mapErr(err, "list datasets")
}

// DatasetsBySHA256 finds live datasets with identical content that the
// viewer may see, to offer reuse instead of a second copy.
func (q *Queries) DatasetsBySHA256(ctx context.Context, v Viewer, sha string) ([]Dataset, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+datasetColumns+datasetFrom+`WHERE d.sha256 = @sha AND d.deleted_at IS NULL AND `+visibleTo+`ORDER BY d.id`,
		pgx.NamedArgs{"sha": sha, "viewer": v.UserID, "admin": v.Admin})
	ds, err := pgx.CollectRows(rows, scanDataset)
	return ds, mapErr(err, "datasets by sha256")
}

// DatasetItems returns up to limit items after index after (keyset paging).
func (q *Queries) DatasetItems(ctx context.Context, datasetID int64, after, limit int) ([]DatasetItem, error) {
	rows, _ := q.db.Query(ctx, `SELECT idx, custom_id, request, reference, coalesce(category, '') FROM dataset_items
		WHERE dataset_id = @id AND idx > @after ORDER BY idx LIMIT @limit`,
		pgx.NamedArgs{"id": datasetID, "after": after, "limit": limit})
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DatasetItem, error) {
		var it DatasetItem
		err := row.Scan(&it.Idx, &it.CustomID, &it.Request, &it.Reference, &it.Category)
		return it, err
	})
	return items, mapErr(err, "dataset items")
}

// DeleteDataset deletes a live dataset the viewer owns (or any, for
// admins). A dataset no benchmark has used goes with its items; one a
// benchmark used (a run or an import, anyone's) is only marked deleted: it
// leaves every list and cannot be used for new benchmarks or imports, and
// its items stay for the results that refer to them. It reports whether
// the rows stayed (soft).
func (s *Store) DeleteDataset(ctx context.Context, v Viewer, id int64) (soft bool, err error) {
	err = s.InTx(ctx, func(q *Queries) error {
		// The row lock first, in a statement of its own: a benchmark being
		// created on this dataset holds a key-share lock on it until it
		// commits, so the check below (a new snapshot) sees it.
		var locked int64
		err := q.db.QueryRow(ctx, `SELECT d.id FROM datasets d
			WHERE d.id = @id AND d.deleted_at IS NULL AND (d.owner_id = @viewer OR @admin) FOR UPDATE`,
			pgx.NamedArgs{"id": id, "viewer": v.UserID, "admin": v.Admin}).Scan(&locked)
		if err != nil {
			return err
		}
		if err := q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM benchmarks WHERE dataset_id = @id)`, pgx.NamedArgs{"id": id}).Scan(&soft); err != nil {
			return err
		}
		if soft {
			_, err = q.db.Exec(ctx, `UPDATE datasets SET deleted_at = now() WHERE id = @id`, pgx.NamedArgs{"id": id})
		} else {
			_, err = q.db.Exec(ctx, `DELETE FROM datasets WHERE id = @id`, pgx.NamedArgs{"id": id})
		}
		return err
	})
	return soft, mapErr(err, "delete dataset")
}

// CountStarterDatasets counts the live starter datasets.
func (q *Queries) CountStarterDatasets(ctx context.Context) (int, error) {
	var n int
	err := q.db.QueryRow(ctx, `SELECT count(*) FROM datasets WHERE starter AND deleted_at IS NULL`).Scan(&n)
	return n, mapErr(err, "count starter datasets")
}

// DatasetByName returns the newest live dataset with this name that the
// viewer may see.
func (q *Queries) DatasetByName(ctx context.Context, v Viewer, name string) (Dataset, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+datasetColumns+datasetFrom+`WHERE d.name = @name AND d.deleted_at IS NULL AND `+visibleTo+`
		ORDER BY d.id DESC LIMIT 1`, pgx.NamedArgs{"name": name, "viewer": v.UserID, "admin": v.Admin})
	d, err := pgx.CollectExactlyOneRow(rows, scanDataset)
	return d, mapErr(err, "dataset by name")
}

// HideDataset takes a dataset out of every list while its items stay
// readable (a judge's prompts are not a dataset anyone picks).
func (q *Queries) HideDataset(ctx context.Context, id int64) error {
	_, err := q.db.Exec(ctx, `UPDATE datasets SET deleted_at = now() WHERE id = @id`, pgx.NamedArgs{"id": id})
	return mapErr(err, "hide dataset")
}
