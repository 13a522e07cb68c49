package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// AttestedResult is a result row's measured columns: what an agent wrote
// (the columns its INSERT is granted, migration 0013), never what the
// server derives from them later (scores, sandbox findings).
type AttestedResult struct {
	Idx              int
	Sample           int
	CustomID         string
	Status           string
	Output           string
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	TokensEstimated  bool
	SentAt           time.Time
	TTFTMs           *float64
	E2EMs            *float64
	TPOTMs           *float64
	ITLMeanMs        *float64
	ITLP50Ms         *float64
	ITLP99Ms         *float64
	ITLMaxMs         *float64
	ContentEvents    int
	HTTPStatus       *int
	RequestID        string
	ErrorClass       string
	Error            string
	Phase            string
	AgentID          *int64
	ITLGapsUs        []int32
	ITLTokens        []int32
}

// ForEachAttestedResult calls fn with each of the run's results in item
// order, reading them row by row.
func (q *Queries) ForEachAttestedResult(ctx context.Context, runID int64, fn func(AttestedResult) error) error {
	rows, err := q.db.Query(ctx, `SELECT idx, sample, custom_id, status, output, finish_reason, prompt_tokens, completion_tokens,
		tokens_estimated, sent_at, ttft_ms, e2e_ms, tpot_ms, itl_mean_ms, itl_p50_ms, itl_p99_ms, itl_max_ms,
		content_events, http_status, request_id, error_class, error, phase, agent_id, itl_gaps_us, itl_tokens
		FROM results WHERE run_id = @run ORDER BY idx, sample`, pgx.NamedArgs{"run": runID})
	if err != nil {
		return mapErr(err, "read results to attest")
	}
	defer rows.Close()
	var r AttestedResult
	for rows.Next() {
		r = AttestedResult{}
		if err := rows.Scan(&r.Idx, &r.Sample, &r.CustomID, &r.Status, &r.Output, &r.FinishReason, &r.PromptTokens, &r.CompletionTokens,
			&r.TokensEstimated, &r.SentAt, &r.TTFTMs, &r.E2EMs, &r.TPOTMs, &r.ITLMeanMs, &r.ITLP50Ms, &r.ITLP99Ms, &r.ITLMaxMs,
			&r.ContentEvents, &r.HTTPStatus, &r.RequestID, &r.ErrorClass, &r.Error, &r.Phase, &r.AgentID, &r.ITLGapsUs, &r.ITLTokens); err != nil {
			return mapErr(err, "read results to attest")
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return mapErr(rows.Err(), "read results to attest")
}

// Attestation is a run's signed digest as stored.
type Attestation struct {
	RunID      int64
	Fence      int64
	RowCount   int
	RowKeys    []byte
	RowDigests []byte
	Digest     []byte
	Signature  []byte
	PublicKey  []byte
	SignedAt   time.Time
}

// RunFence returns the run's state and fence: whether it has ended, and
// which working of it its results belong to.
func (q *Queries) RunFence(ctx context.Context, runID int64) (state string, fence int64, err error) {
	err = q.db.QueryRow(ctx, `SELECT state, fence FROM runs WHERE id = @id`, pgx.NamedArgs{"id": runID}).Scan(&state, &fence)
	return state, fence, mapErr(err, "read the run's fence")
}

// SaveAttestation stores a run's attestation unless one for the same or
// a later fence is kept already (a rescoring does not sign again what
// may have been changed since). It reports whether it stored a.
func (q *Queries) SaveAttestation(ctx context.Context, a Attestation) (bool, error) {
	// A run that ended before its first result (cancelled while its agent
	// started) is signed too, over no rows: its lists are empty, not
	// NULL, which the columns refuse; the scoring job otherwise failed on
	// it until River discarded it (found by `make bench-day`).
	if a.RowKeys == nil {
		a.RowKeys = []byte{}
	}
	if a.RowDigests == nil {
		a.RowDigests = []byte{}
	}
	tag, err := q.db.Exec(ctx, `INSERT INTO run_attestations (run_id, fence, row_count, row_keys, row_digests, digest, signature, public_key)
		VALUES (@run, @fence, @rows, @keys, @digests, @digest, @sig, @pub)
		ON CONFLICT (run_id) DO UPDATE SET fence = excluded.fence, row_count = excluded.row_count, row_keys = excluded.row_keys,
			row_digests = excluded.row_digests, digest = excluded.digest, signature = excluded.signature,
			public_key = excluded.public_key, signed_at = now()
		WHERE run_attestations.fence < excluded.fence`,
		pgx.NamedArgs{"run": a.RunID, "fence": a.Fence, "rows": a.RowCount, "keys": a.RowKeys, "digests": a.RowDigests,
			"digest": a.Digest, "sig": a.Signature, "pub": a.PublicKey})
	if err != nil {
		return false, mapErr(err, "store the run's attestation")
	}
	return tag.RowsAffected() == 1, nil
}

// HasAttestation says whether the run has an attestation for fence or a
// later one.
func (q *Queries) HasAttestation(ctx context.Context, runID, fence int64) (bool, error) {
	var ok bool
	err := q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM run_attestations WHERE run_id = @run AND fence >= @fence)`,
		pgx.NamedArgs{"run": runID, "fence": fence}).Scan(&ok)
	return ok, mapErr(err, "read the run's attestation")
}

// RunAttestation returns the run's attestation (ErrNotFound: none yet).
func (q *Queries) RunAttestation(ctx context.Context, runID int64) (Attestation, error) {
	var a Attestation
	err := q.db.QueryRow(ctx, `SELECT run_id, fence, row_count, row_keys, row_digests, digest, signature, public_key, signed_at
		FROM run_attestations WHERE run_id = @run`, pgx.NamedArgs{"run": runID}).
		Scan(&a.RunID, &a.Fence, &a.RowCount, &a.RowKeys, &a.RowDigests, &a.Digest, &a.Signature, &a.PublicKey, &a.SignedAt)
	return a, mapErr(err, "read the run's attestation")
}

// RunDigests returns the attested digest of each of the runs that has one.
func (q *Queries) RunDigests(ctx context.Context, runIDs []int64) (map[int64][]byte, error) {
	rows, _ := q.db.Query(ctx, `SELECT run_id, digest FROM run_attestations WHERE run_id = ANY(@runs)`, pgx.NamedArgs{"runs": runIDs})
	out := map[int64][]byte{}
	var id int64
	var d []byte
	_, err := pgx.ForEachRow(rows, []any{&id, &d}, func() error {
		out[id] = append([]byte(nil), d...)
		return nil
	})
	return out, mapErr(err, "read the runs' digests")
}
