package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
)

// ScoreItem is a result to score: its output and the item's reference.
type ScoreItem struct {
	Idx       int
	Sample    int
	Status    string
	Output    string
	Reference json.RawMessage
}

// ScoreItems returns every result of a run with its reference, in item
// order.
func (q *Queries) ScoreItems(ctx context.Context, runID int64) ([]ScoreItem, error) {
	rows, _ := q.db.Query(ctx, `SELECT r.idx, r.sample, r.status, r.output, coalesce(i.reference, 'null')
		FROM results r JOIN runs ru ON ru.id = r.run_id JOIN benchmarks b ON b.id = ru.benchmark_id
		LEFT JOIN dataset_items i ON i.dataset_id = b.dataset_id AND i.idx = r.idx
		WHERE r.run_id = @run ORDER BY r.idx, r.sample`, pgx.NamedArgs{"run": runID})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ScoreItem, error) {
		var it ScoreItem
		err := row.Scan(&it.Idx, &it.Sample, &it.Status, &it.Output, &it.Reference)
		return it, err
	})
	return out, mapErr(err, "score items")
}

// RunQuality is a run's scoring outcome.
type RunQuality struct {
	Scorer          string
	Scored          int
	Mean, Low, High *float64
	// Options are the scorer's settings (nil: none); CorpusBLEU is the
	// bleu scorer's corpus score (nil for other scorers).
	Options    json.RawMessage
	CorpusBLEU *float64
	// Judge is, for the judge scorer, what identifies its verdicts beside
	// the scorer (nil otherwise): part of its ScorerIdentity.
	Judge *JudgeIdentity
}

// SaveScores stores every result's score (nil for one not scored), each
// named by its item and sample, and the run's quality, in one
// transaction.
func (s *Store) SaveScores(ctx context.Context, runID int64, idx, samples []int32, scores []*float64, q RunQuality) error {
	return s.InTx(ctx, func(tx *Queries) error { return tx.saveScores(ctx, runID, idx, samples, scores, q) })
}

// saveScores is SaveScores within a transaction the caller holds; nil
// samples means the first answer of each item.
func (q *Queries) saveScores(ctx context.Context, runID int64, idx, samples []int32, scores []*float64, rq RunQuality) error {
	if samples == nil {
		samples = make([]int32, len(idx))
	}
	if _, err := q.db.Exec(ctx, `UPDATE results r SET score = u.score
		FROM unnest(@idx::int4[], @samples::int4[], @scores::float8[]) AS u(idx, sample, score)
		WHERE r.run_id = @run AND r.idx = u.idx AND r.sample = u.sample`,
		pgx.NamedArgs{"run": runID, "idx": idx, "samples": samples, "scores": scores}); err != nil {
		return mapErr(err, "save scores")
	}
	_, err := q.db.Exec(ctx, `UPDATE runs SET scorer = @scorer, scored = @scored, quality = @mean, quality_lo = @lo,
		quality_hi = @hi, scorer_options = @options, corpus_bleu = @corpus, scored_at = now() WHERE id = @run`,
		pgx.NamedArgs{"run": runID, "scorer": rq.Scorer, "scored": rq.Scored, "mean": rq.Mean, "lo": rq.Low, "hi": rq.High,
			"options": rq.Options, "corpus": rq.CorpusBLEU})
	if err != nil {
		return mapErr(err, "save run quality")
	}
	return q.saveRunQuality(ctx, runID, rq)
}

// RunScorer is the scorer a run's benchmark names and its dataset's
// default.
func (q *Queries) RunScorer(ctx context.Context, runID int64) (manifest, dataset string, err error) {
	err = q.db.QueryRow(ctx, `SELECT coalesce(b.manifest->>'scorer', ''), d.default_scorer
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id JOIN datasets d ON d.id = b.dataset_id WHERE r.id = @run`,
		pgx.NamedArgs{"run": runID}).Scan(&manifest, &dataset)
	return manifest, dataset, mapErr(err, "run scorer")
}

// RunScorerOptions is the scorer_options of a run's benchmark manifest
// (nil when it has none).
func (q *Queries) RunScorerOptions(ctx context.Context, runID int64) (json.RawMessage, error) {
	var raw json.RawMessage
	err := q.db.QueryRow(ctx, `SELECT b.manifest->'scorer_options'
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = @run`,
		pgx.NamedArgs{"run": runID}).Scan(&raw)
	return raw, mapErr(err, "run scorer options")
}
