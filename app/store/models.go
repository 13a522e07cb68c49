package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrModelNameTaken is returned when a model with the same name exists.
var ErrModelNameTaken = errors.New("a model with this name already exists")

// Model is an entry of the model registry.
type Model struct {
	ID            int64
	Name          string
	DisplayName   string
	Family        string
	ParamsB       float64
	Quantization  string
	ContextLength int
	License       string
	MemoryGB      *float64 // given; nil means estimated
	BaseModelID   *int64
	BaseModelName string
	Adapter       bool
	RetiredAt     *time.Time
	CreatedAt     time.Time
}

// ModelFields is what a person edits.
type ModelFields struct {
	Name          string
	DisplayName   string
	Family        string
	ParamsB       float64
	Quantization  string
	ContextLength int
	License       string
	MemoryGB      *float64
	BaseModelID   *int64
	Adapter       bool
}

const modelColumns = `m.id, m.name, m.display_name, m.family, m.params_b, m.quantization, m.context_length, m.license,
	m.memory_gb, m.base_model_id, coalesce(b.name, ''), m.adapter, m.retired_at, m.created_at`

const modelFrom = ` FROM models m LEFT JOIN models b ON b.id = m.base_model_id `

func scanModel(row pgx.CollectableRow) (Model, error) {
	var m Model
	err := row.Scan(&m.ID, &m.Name, &m.DisplayName, &m.Family, &m.ParamsB, &m.Quantization, &m.ContextLength, &m.License,
		&m.MemoryGB, &m.BaseModelID, &m.BaseModelName, &m.Adapter, &m.RetiredAt, &m.CreatedAt)
	return m, err
}

func modelArgs(f ModelFields) pgx.NamedArgs {
	return pgx.NamedArgs{"name": f.Name, "display": f.DisplayName, "family": f.Family, "params": f.ParamsB,
		"quant": f.Quantization, "ctx": f.ContextLength, "license": f.License, "memory": f.MemoryGB,
		"base": f.BaseModelID, "adapter": f.Adapter}
}

// CreateModel adds a model; ErrModelNameTaken when the name is in use.
func (q *Queries) CreateModel(ctx context.Context, f ModelFields) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO models (name, display_name, family, params_b, quantization, context_length,
		license, memory_gb, base_model_id, adapter)
		VALUES (@name, @display, @family, @params, @quant, @ctx, @license, @memory, @base, @adapter)
		RETURNING id`, modelArgs(f)).Scan(&id)
	return id, mapErr(err, "create model")
}

// UpdateModel changes a model's fields.
func (q *Queries) UpdateModel(ctx context.Context, id int64, f ModelFields) error {
	args := modelArgs(f)
	args["id"] = id
	tag, err := q.db.Exec(ctx, `UPDATE models SET name = @name, display_name = @display, family = @family, params_b = @params,
			quantization = @quant, context_length = @ctx, license = @license, memory_gb = @memory,
			base_model_id = @base, adapter = @adapter, updated_at = now()
		WHERE id = @id`, args)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "update model")
}

// SetModelRetired retires a model (no longer offered for new benchmarks;
// past results keep it) or brings it back.
func (q *Queries) SetModelRetired(ctx context.Context, id int64, retired bool) error {
	tag, err := q.db.Exec(ctx, `UPDATE models SET retired_at = CASE WHEN @retired THEN coalesce(retired_at, now()) END,
		updated_at = now() WHERE id = @id`, pgx.NamedArgs{"id": id, "retired": retired})
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "retire model")
}

// ModelByID returns one model.
func (q *Queries) ModelByID(ctx context.Context, id int64) (Model, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+modelColumns+modelFrom+`WHERE m.id = @id`, pgx.NamedArgs{"id": id})
	m, err := pgx.CollectExactlyOneRow(rows, scanModel)
	return m, mapErr(err, "model by id")
}

// ListModels returns every model, live ones first, by name.
func (q *Queries) ListModels(ctx context.Context) ([]Model, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+modelColumns+modelFrom+`ORDER BY m.retired_at IS NOT NULL, m.name`)
	ms, err := pgx.CollectRows(rows, scanModel)
	return ms, mapErr(err, "list models")
}

// CountModels counts the registry's models.
func (q *Queries) CountModels(ctx context.Context) (int, error) {
	var n int
	err := q.db.QueryRow(ctx, `SELECT count(*) FROM models`).Scan(&n)
	return n, mapErr(err, "count models")
}

// ModelByName returns the registry entry with this name.
func (q *Queries) ModelByName(ctx context.Context, name string) (Model, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+modelColumns+modelFrom+`WHERE m.name = @name`, pgx.NamedArgs{"name": name})
	m, err := pgx.CollectExactlyOneRow(rows, scanModel)
	return m, mapErr(err, "model by name")
}
