package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ProviderPrice is what a remote provider charges for a model, in USD per
// million input (prompt) and output (completion) tokens.
type ProviderPrice struct {
	Provider    string
	Model       string
	InputPer1M  float64
	OutputPer1M float64
	UpdatedAt   time.Time
}

// ListProviderPrices returns every price, by provider then model.
func (q *Queries) ListProviderPrices(ctx context.Context) ([]ProviderPrice, error) {
	rows, _ := q.db.Query(ctx, `SELECT provider, model, input_per_1m::float8, output_per_1m::float8, updated_at
		FROM provider_prices ORDER BY provider, model`)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ProviderPrice, error) {
		var p ProviderPrice
		err := row.Scan(&p.Provider, &p.Model, &p.InputPer1M, &p.OutputPer1M, &p.UpdatedAt)
		return p, err
	})
	return out, mapErr(err, "list provider prices")
}

// SetProviderPrice sets (or replaces) a provider's price for a model.
// Runs already created keep the price they were created under.
func (q *Queries) SetProviderPrice(ctx context.Context, p ProviderPrice) error {
	_, err := q.db.Exec(ctx, `INSERT INTO provider_prices (provider, model, input_per_1m, output_per_1m)
		VALUES (@provider, @model, @in, @out)
		ON CONFLICT (provider, model) DO UPDATE SET input_per_1m = excluded.input_per_1m, output_per_1m = excluded.output_per_1m, updated_at = now()`,
		pgx.NamedArgs{"provider": p.Provider, "model": p.Model, "in": p.InputPer1M, "out": p.OutputPer1M})
	return mapErr(err, "set provider price")
}

// DeleteProviderPrice removes a provider's price for a model; ErrNotFound
// when there was none.
func (q *Queries) DeleteProviderPrice(ctx context.Context, provider, model string) error {
	tag, err := q.db.Exec(ctx, `DELETE FROM provider_prices WHERE provider = @provider AND model = @model`,
		pgx.NamedArgs{"provider": provider, "model": model})
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return mapErr(err, "delete provider price")
}

// RecordRunProvider records that a run is a remote provider's, with the
// provider's current price for the run's model when an administrator has
// set one; it reports whether there was one.
func (q *Queries) RecordRunProvider(ctx context.Context, runID int64, provider, model string) (bool, error) {
	var priced bool
	err := q.db.QueryRow(ctx, `INSERT INTO run_providers (run_id, provider, input_per_1m, output_per_1m)
		SELECT @run, @provider, pp.input_per_1m, pp.output_per_1m
		FROM (SELECT 1) AS one LEFT JOIN provider_prices pp ON pp.provider = @provider AND pp.model = @model
		RETURNING input_per_1m IS NOT NULL`,
		pgx.NamedArgs{"run": runID, "provider": provider, "model": model}).Scan(&priced)
	return priced, mapErr(err, "record run provider")
}
