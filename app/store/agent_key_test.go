package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
)

// An agent's store carries its key in every statement and transaction,
// and only there: the setting is local to each transaction, so the
// pool's next statement, whoever sends it, carries none.
func TestAgentStoreCarriesItsKeyInEveryTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	key, hash := store.NewAgentKey()
	if len(hash) != 32 || string(hash) != string(store.AgentKeyHash(key)) {
		t.Fatalf("key hash %x", hash)
	}
	st, err := store.NewAgent(pool, key)
	if err != nil {
		t.Fatal(err)
	}
	const carried = `SELECT coalesce(current_setting('ruckus.agent_key', true), '')`
	var got string
	if err := st.DB().QueryRow(ctx, carried).Scan(&got); err != nil || got != key {
		t.Errorf("a statement carries %q (%v), want the key", got, err)
	}
	rows, err := st.DB().Query(ctx, carried+` FROM generate_series(1, 3)`)
	if err != nil {
		t.Fatal(err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(all) != 3 || all[2] != key {
		t.Errorf("rows carry %q (%v)", all, err)
	}
	if tag, err := st.DB().Exec(ctx, `SELECT set_config('application_name', current_setting('ruckus.agent_key'), true)`); err != nil || tag.String() != "SELECT 1" {
		t.Errorf("an Exec without the key: %v %v", tag, err)
	}
	err = st.InTxWith(ctx, func(tx pgx.Tx, _ *store.Queries) error { return tx.QueryRow(ctx, carried).Scan(&got) })
	if err != nil || got != key {
		t.Errorf("InTx carries %q (%v), want the key", got, err)
	}
	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, carried).Scan(&got); err != nil || got != key {
		t.Errorf("a transaction carries %q (%v), want the key", got, err)
	}
	_ = tx.Rollback(ctx)
	if err := pool.QueryRow(ctx, carried).Scan(&got); err != nil || got != "" {
		t.Errorf("the pool's next statement carries %q (%v), want none", got, err)
	}

	// A failed query still answers rows, as the pool does, so a caller
	// that reads them before checking the error fails instead of panicking.
	closed, err := pgxpool.New(ctx, pgtest.URL(t, pool))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	cst, err := store.NewAgent(closed, key)
	if err != nil {
		t.Fatal(err)
	}
	rows, qerr := cst.DB().Query(ctx, `SELECT 1`)
	if qerr == nil || rows == nil {
		t.Fatalf("a query on a closed pool: rows %v, err %v", rows, qerr)
	}
	if _, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[int]); err == nil {
		t.Error("reading a failed query's rows succeeded")
	}

	// The simple protocol would write the key into the statement's text.
	cfg, _ := pgxpool.ParseConfig(pgtest.URL(t, pool))
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	simple, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer simple.Close()
	if _, err := store.NewAgent(simple, key); err == nil {
		t.Error("an agent store over the simple protocol was allowed")
	}
}
