package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/jobs"
)

// A conclusion is drawn only between comparable runs
// (docs/concepts.md#comparability-and-noise):
//   - a quality under the same scorer identity (ScorerIdentity): the
//     scorer, its options as canonical JSON and, for the judge, its model,
//     rubric, template, scale and mode;
//   - a speed or latency under the same load identity: the load profile and
//     its parameters, the sampling that changes what is generated
//     (max_tokens, n, temperature), the dataset, and the class of the
//     requests' measured input and output lengths;
//   - both also under the same few-shot setting (k and seed; FewShotKey):
//     a 5-shot run's prompts are other prompts than a 0-shot run's.

// saveRunQuality keeps the run's quality under its scorer identity beside
// the others it has, with its scored items (the first answer of each),
// replacing an earlier scoring under the same identity (and so its paired
// comparisons).
func (q *Queries) saveRunQuality(ctx context.Context, runID int64, rq RunQuality) error {
	var k int
	var seed int64
	var exemplars string
	if err := q.db.QueryRow(ctx, `SELECT fewshot_k, fewshot_seed, fewshot_exemplars FROM runs WHERE id = @run`,
		pgx.NamedArgs{"run": runID}).Scan(&k, &seed, &exemplars); err != nil {
		return mapErr(err, "run's few-shot setting")
	}
	key := ScorerIdentity(rq.Scorer, rq.Options, rq.Judge)
	if key != "" {
		key += FewShotKey(k, seed, exemplars)
	}
	args := pgx.NamedArgs{"run": runID, "key": key, "scorer": rq.Scorer,
		"items": rq.Scored, "mean": rq.Mean, "lo": rq.Low, "hi": rq.High}
	if _, err := q.db.Exec(ctx, `DELETE FROM run_qualities WHERE run_id = @run AND scorer_key = @key`, args); err != nil {
		return mapErr(err, "replace run quality")
	}
	_, err := q.db.Exec(ctx, `INSERT INTO run_qualities (run_id, scorer_key, scorer, items, quality, quality_lo, quality_hi, idx, scores)
		SELECT @run, @key, @scorer, @items, @mean, @lo, @hi,
			coalesce(array_agg(idx ORDER BY idx), '{}'), coalesce(array_agg(score ORDER BY idx), '{}')
		FROM results WHERE run_id = @run AND sample = 0 AND score IS NOT NULL`, args)
	return mapErr(err, "save run quality")
}

// Quality is a run's quality under one scorer identity.
type Quality struct {
	RunID     int64     `json:"run_id"`
	ScorerKey string    `json:"scorer"`
	Scorer    string    `json:"scorer_name"`
	Items     int       `json:"items"`
	Mean      *float64  `json:"quality"`
	Lo        *float64  `json:"quality_lo"`
	Hi        *float64  `json:"quality_hi"`
	ScoredAt  time.Time `json:"scored_at"`
}

// RunQualities returns every quality of each run, oldest scoring first.
func (q *Queries) RunQualities(ctx context.Context, runIDs []int64) (map[int64][]Quality, error) {
	rows, _ := q.db.Query(ctx, `SELECT run_id, scorer_key, scorer, items, quality, quality_lo, quality_hi, scored_at
		FROM run_qualities WHERE run_id = ANY(@ids) ORDER BY run_id, scored_at, scorer_key`, pgx.NamedArgs{"ids": runIDs})
	out := map[int64][]Quality{}
	var x Quality
	_, err := pgx.ForEachRow(rows, []any{&x.RunID, &x.ScorerKey, &x.Scorer, &x.Items, &x.Mean, &x.Lo, &x.Hi, &x.ScoredAt}, func() error {
		out[x.RunID] = append(out[x.RunID], x)
		return nil
	})
	return out, mapErr(err, "run qualities")
}

// QualityPair is a paired comparison of two runs' quality under one
// scorer identity: A − B over the items both scored.
type QualityPair struct {
	A, B         int64
	ScorerKey    string
	Items        int
	Mean, Lo, Hi float64
	P            float64
	Test         string
	OnlyA, OnlyB int
}

// KeptQualityPairs returns the wanted pairs (each lower id first) kept in
// quality_pairs under scorer identity key; a pair not kept yet is absent
// (conclude.QualityPairs computes and keeps it).
func (q *Queries) KeptQualityPairs(ctx context.Context, key string, want [][2]int64) ([]QualityPair, error) {
	if len(want) == 0 {
		return nil, nil
	}
	as, bs := make([]int64, len(want)), make([]int64, len(want))
	for i, w := range want {
		as[i], bs[i] = w[0], w[1]
	}
	rows, _ := q.db.Query(ctx, `SELECT p.run_a, p.run_b, p.scorer_key, p.items, p.mean, p.lo, p.hi, p.p, p.test, p.only_a, p.only_b
		FROM unnest(@as::bigint[], @bs::bigint[]) AS w(a, b)
		JOIN quality_pairs p ON p.scorer_key = @key AND p.run_a = w.a AND p.run_b = w.b`, pgx.NamedArgs{"key": key, "as": as, "bs": bs})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (QualityPair, error) {
		var p QualityPair
		err := row.Scan(&p.A, &p.B, &p.ScorerKey, &p.Items, &p.Mean, &p.Lo, &p.Hi, &p.P, &p.Test, &p.OnlyA, &p.OnlyB)
		return p, err
	})
	return out, mapErr(err, "quality pairs")
}

// KeepQualityPairs keeps computed paired comparisons (quality_pairs); a
// pair kept meanwhile stays as it was.
func (q *Queries) KeepQualityPairs(ctx context.Context, pairs []QualityPair) error {
	b := &pgx.Batch{}
	for _, p := range pairs {
		b.Queue(`INSERT INTO quality_pairs (run_a, run_b, scorer_key, items, mean, lo, hi, p, test, only_a, only_b)
			VALUES (@a, @b, @key, @items, @mean, @lo, @hi, @p, @test, @only_a, @only_b) ON CONFLICT DO NOTHING`,
			pgx.NamedArgs{"a": p.A, "b": p.B, "key": p.ScorerKey, "items": p.Items, "mean": p.Mean, "lo": p.Lo, "hi": p.Hi, "p": p.P,
				"test": p.Test, "only_a": p.OnlyA, "only_b": p.OnlyB})
	}
	if b.Len() == 0 {
		return nil
	}
	// A quality replaced meanwhile drops its pairs' rows through the
	// foreign key; the insert then fails and the pair is computed again
	// next time.
	if err := q.db.SendBatch(ctx, b).Close(); err != nil && !isForeignKeyViolation(err) {
		return mapErr(err, "keep quality pairs")
	}
	return nil
}

// RunStat is a run's figures as run_stats keeps them.
type RunStat struct {
	RunID   int64
	Load    jobs.LoadIdentity
	OK      int
	Batches int
	// TPS, RPS and Goodput are the rates as kept (nil: no figure); their
	// intervals are the engine's to read (conclude.KeptEstimate).
	TPS, RPS     *KeptRate
	Goodput      *KeptRate
	E2EP95       *QuantileInterval
	TTFTP95      *QuantileInterval
	OutputTokens struct{ P50, P90, Max *float64 }
}

// RunStats returns the current figures of each run that has them (rows
// of an earlier attempt than the run's are stale and left out).
func (q *Queries) RunStats(ctx context.Context, runIDs []int64) (map[int64]RunStat, error) {
	rows, _ := q.db.Query(ctx, `SELECT s.run_id, s.load_identity, s.ok, s.batches,
			s.tps, s.tps_se, s.tps_df, s.rps, s.rps_se, s.rps_df, s.goodput, s.goodput_se, s.goodput_df,
			s.e2e_p95, s.e2e_p95_lo, s.e2e_p95_hi, s.ttft_p95, s.ttft_p95_lo, s.ttft_p95_hi,
			coalesce(s.e2e_p95_coverage, 0), coalesce(s.ttft_p95_coverage, 0), s.output_tokens_p50, s.output_tokens_p90, s.output_tokens_max
		FROM run_stats s JOIN runs r ON r.id = s.run_id AND r.attempt = s.attempt
		WHERE s.run_id = ANY(@ids)`, pgx.NamedArgs{"ids": runIDs})
	out := map[int64]RunStat{}
	var s RunStat
	var load []byte
	var tps, tpsSE, tpsDF, rps, rpsSE, rpsDF, gp, gpSE, gpDF, e2e, e2eLo, e2eHi, ttft, ttftLo, ttftHi *float64
	var e2eCov, ttftCov float64
	_, err := pgx.ForEachRow(rows, []any{&s.RunID, &load, &s.OK, &s.Batches, &tps, &tpsSE, &tpsDF, &rps, &rpsSE, &rpsDF,
		&gp, &gpSE, &gpDF, &e2e, &e2eLo, &e2eHi, &ttft, &ttftLo, &ttftHi, &e2eCov, &ttftCov,
		&s.OutputTokens.P50, &s.OutputTokens.P90, &s.OutputTokens.Max}, func() error {
		if err := json.Unmarshal(load, &s.Load); err != nil {
			return err
		}
		s.TPS, s.RPS, s.Goodput = kept(tps, tpsSE, tpsDF), kept(rps, rpsSE, rpsDF), kept(gp, gpSE, gpDF)
		s.E2EP95, s.TTFTP95 = quantile(e2e, e2eLo, e2eHi, e2eCov, s.OK), quantile(ttft, ttftLo, ttftHi, ttftCov, s.OK)
		out[s.RunID] = s
		s = RunStat{}
		return nil
	})
	return out, mapErr(err, "run stats")
}

// KeptRate is a rate as run_stats keeps it: its batch mean and, where
// the run had batches to spread over, the mean's standard error and
// degrees of freedom (nil without).
type KeptRate struct {
	Mean   float64
	SE, DF *float64
}

func kept(mean, se, df *float64) *KeptRate {
	if mean == nil {
		return nil
	}
	return &KeptRate{Mean: *mean, SE: se, DF: df}
}

func quantile(v, lo, hi *float64, coverage float64, n int) *QuantileInterval {
	if v == nil || lo == nil || hi == nil {
		return nil
	}
	return &QuantileInterval{N: n, P95: *v, Lo: *lo, Hi: *hi, Coverage: coverage}
}

// StatsInput is what a finished run's statistics are computed from
// (conclude.ComputeRunStats): its attempt, its benchmark's manifest and
// dataset, its few-shot key and its results outside warm-up.
type StatsInput struct {
	Attempt   int
	Completed bool
	Manifest  json.RawMessage
	DatasetID int64
	// FewShot is the run's few-shot key (FewShotKey, trimmed).
	FewShot string
	Results []StatsResult
}

// StatsResult is one result as a run's statistics read it: when it was
// sent (Unix seconds), its E2E latency and TTFT (ms), whether it succeeded
// and met every SLO of the manifest, and its tokens.
type StatsResult struct {
	Sent, E2E       float64
	OK, Good        bool
	TTFT            *float64
	Tokens, Prompts int
}

// RunStatsInput reads what a run's statistics are computed from: the run
// and, once it is completed, its results outside warm-up (Good under the
// manifest's SLOs, which the SQL applies).
func (s *Store) RunStatsInput(ctx context.Context, runID int64) (StatsInput, error) {
	var in StatsInput
	var state, exemplars string
	var shotsK int
	var shotsSeed int64
	err := s.db.QueryRow(ctx, `SELECT r.attempt, r.state, b.manifest, b.dataset_id, r.fewshot_k, r.fewshot_seed, r.fewshot_exemplars
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
		WHERE r.id = @run`, pgx.NamedArgs{"run": runID}).Scan(&in.Attempt, &state, &in.Manifest, &in.DatasetID, &shotsK, &shotsSeed, &exemplars)
	if err != nil {
		return in, mapErr(err, "run for stats")
	}
	in.Completed = state == "completed"
	if !in.Completed {
		return in, nil
	}
	in.FewShot = strings.TrimSpace(FewShotKey(shotsK, shotsSeed, exemplars))
	var m struct {
		SLO jobs.SLO `json:"slo"`
	}
	_ = json.Unmarshal(in.Manifest, &m)
	args := sloBounds(m.SLO)
	args["run"] = runID
	rows, _ := s.db.Query(ctx, `SELECT extract(epoch FROM sent_at)::float8, status = 'ok', coalesce(e2e_ms, 0), ttft_ms,
			completion_tokens, prompt_tokens, `+sloFilter+`
		FROM results WHERE run_id = @run AND phase <> 'warmup'`, args)
	var r StatsResult
	if _, err := pgx.ForEachRow(rows, []any{&r.Sent, &r.OK, &r.E2E, &r.TTFT, &r.Tokens, &r.Prompts, &r.Good}, func() error {
		in.Results = append(in.Results, r)
		return nil
	}); err != nil {
		return in, mapErr(err, "results for stats")
	}
	return in, nil
}

// Rate is a rate's batch-means estimate as run_stats keeps it.
type Rate struct{ Mean, SE, DF float64 }

// P95 is a p95 as run_stats keeps it: the figure and, when there were
// enough values for one, its interval and the interval's coverage.
type P95 struct {
	P95         float64
	Lo, Hi, Cov *float64
}

// RunStatsRow is a run's figures as computed (conclude.ComputeRunStats)
// for run_stats; a nil field has no figure.
type RunStatsRow struct {
	RunID             int64
	Attempt           int
	Load              jobs.LoadIdentity
	OK, Batches       int
	TPS, RPS, Goodput *Rate
	E2E, TTFT         *P95
	OutP50, OutP90    *float64
	OutMax            *float64
}

// SaveRunStats keeps a run's computed figures (run_stats) for its attempt,
// replacing those of an earlier computation.
func (s *Store) SaveRunStats(ctx context.Context, f RunStatsRow) error {
	loadJSON, err := json.Marshal(f.Load)
	if err != nil {
		return fmt.Errorf("load identity: %w", err)
	}
	row := pgx.NamedArgs{"run": f.RunID, "attempt": f.Attempt, "key": f.Load.Key(), "load": loadJSON, "ok": f.OK,
		"batches": f.Batches, "out_p50": f.OutP50, "out_p90": f.OutP90, "out_max": f.OutMax}
	for name, r := range map[string]*Rate{"tps": f.TPS, "rps": f.RPS, "goodput": f.Goodput} {
		row[name], row[name+"_se"], row[name+"_df"] = nil, nil, nil
		if r != nil {
			row[name], row[name+"_se"], row[name+"_df"] = r.Mean, r.SE, r.DF
		}
	}
	for name, p := range map[string]*P95{"e2e": f.E2E, "ttft": f.TTFT} {
		row[name], row[name+"_lo"], row[name+"_hi"], row[name+"_cov"] = nil, nil, nil, nil
		if p != nil {
			row[name], row[name+"_lo"], row[name+"_hi"], row[name+"_cov"] = p.P95, p.Lo, p.Hi, p.Cov
		}
	}
	_, err = s.db.Exec(ctx, `INSERT INTO run_stats (run_id, attempt, load_key, load_identity, ok, batches,
			tps, tps_se, tps_df, rps, rps_se, rps_df, goodput, goodput_se, goodput_df,
			e2e_p95, e2e_p95_lo, e2e_p95_hi, e2e_p95_coverage, ttft_p95, ttft_p95_lo, ttft_p95_hi, ttft_p95_coverage,
			output_tokens_p50, output_tokens_p90, output_tokens_max)
		VALUES (@run, @attempt, @key, @load, @ok, @batches, @tps, @tps_se, @tps_df, @rps, @rps_se, @rps_df,
			@goodput, @goodput_se, @goodput_df, @e2e, @e2e_lo, @e2e_hi, @e2e_cov, @ttft, @ttft_lo, @ttft_hi, @ttft_cov, @out_p50, @out_p90, @out_max)
		ON CONFLICT (run_id) DO UPDATE SET attempt = EXCLUDED.attempt, load_key = EXCLUDED.load_key, load_identity = EXCLUDED.load_identity,
			ok = EXCLUDED.ok, batches = EXCLUDED.batches, tps = EXCLUDED.tps, tps_se = EXCLUDED.tps_se, tps_df = EXCLUDED.tps_df,
			rps = EXCLUDED.rps, rps_se = EXCLUDED.rps_se, rps_df = EXCLUDED.rps_df, goodput = EXCLUDED.goodput,
			goodput_se = EXCLUDED.goodput_se, goodput_df = EXCLUDED.goodput_df, e2e_p95 = EXCLUDED.e2e_p95,
			e2e_p95_lo = EXCLUDED.e2e_p95_lo, e2e_p95_hi = EXCLUDED.e2e_p95_hi, e2e_p95_coverage = EXCLUDED.e2e_p95_coverage,
			ttft_p95 = EXCLUDED.ttft_p95, ttft_p95_lo = EXCLUDED.ttft_p95_lo, ttft_p95_hi = EXCLUDED.ttft_p95_hi,
			ttft_p95_coverage = EXCLUDED.ttft_p95_coverage, output_tokens_p50 = EXCLUDED.output_tokens_p50,
			output_tokens_p90 = EXCLUDED.output_tokens_p90, output_tokens_max = EXCLUDED.output_tokens_max, computed_at = now()`, row)
	return mapErr(err, "save run stats")
}

// isForeignKeyViolation says whether err is PostgreSQL's foreign key
// violation (23503).
func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}

// RunQualityPeers returns, for each scorer identity run runID was scored
// under, the other runs of its benchmark scored under it: the runs its
// paired comparisons of quality are drawn with when it is scored
// (conclude.PairRunQualities).
func (s *Store) RunQualityPeers(ctx context.Context, runID int64) (map[string][]int64, error) {
	rows, _ := s.db.Query(ctx, `SELECT q.scorer_key, array_agg(o.run_id)
		FROM run_qualities q JOIN runs r ON r.id = q.run_id
		JOIN runs peer ON peer.benchmark_id = r.benchmark_id AND peer.id <> r.id
		JOIN run_qualities o ON o.run_id = peer.id AND o.scorer_key = q.scorer_key
		WHERE q.run_id = @run GROUP BY q.scorer_key`, pgx.NamedArgs{"run": runID})
	peers := map[string][]int64{}
	var key string
	var ids []int64
	if _, err := pgx.ForEachRow(rows, []any{&key, &ids}, func() error {
		peers[key] = slices.Clone(ids)
		return nil
	}); err != nil {
		return nil, mapErr(err, "run quality peers")
	}
	return peers, nil
}
