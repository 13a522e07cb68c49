package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Regression is one way a completed run is significantly worse than the
// previous completed run of the same target (model × runtime × hardware)
// on the same dataset.
type Regression struct {
	// Metric is quality, throughput or latency_p95.
	Metric       string `json:"metric"`
	AgainstRunID int64  `json:"against_run_id"`
	// Delta is this run's figure minus the earlier run's: for quality the
	// mean of the per-item score differences, for throughput output
	// tokens/s, for latency_p95 milliseconds.
	Delta float64 `json:"delta"`
	// PValue is the paired test's two-sided p (quality only).
	PValue *float64 `json:"p_value"`
	// Detail says in words what was compared and how it was decided, in
	// English.
	Detail string `json:"detail"`
	// DetailSaid is Detail as app/conclude said it (conclude.Said's JSON), for
	// a page to word in its reader's language; empty for flags stored
	// before it was kept. Not part of the API.
	DetailSaid json.RawMessage `json:"-"`
}

// UnmarshalJSON reads a regression as regressionsJSON aggregates it, the
// sentence's codes included.
func (g *Regression) UnmarshalJSON(b []byte) error {
	type plain Regression
	var in struct {
		plain
		Said json.RawMessage `json:"detail_said"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*g = Regression(in.plain)
	if len(in.Said) > 0 && string(in.Said) != "null" {
		g.DetailSaid = in.Said
	}
	return nil
}

// Regression metrics, in the order they are shown.
const (
	RegressionQuality    = "quality"
	RegressionLatency    = "latency_p95"
	RegressionThroughput = "throughput"
)

// regressionsJSON aggregates a run r's regressions as a JSON array, the
// most telling first. A regression is shown only against a run whoever
// may see run r may see too (regressionVisible), so a flag never points
// at another user's private run.
const regressionsJSON = `(SELECT coalesce(json_agg(json_build_object('metric', g.metric, 'against_run_id', g.against_run_id,
		'delta', g.delta, 'p_value', g.p_value, 'detail', g.detail, 'detail_said', g.detail_said)
		ORDER BY array_position(ARRAY['quality', 'latency_p95', 'throughput'], g.metric)), '[]')
	FROM run_regressions g WHERE g.run_id = r.id AND ` + regressionVisible + `)`

// regressionVisible holds for a regression g of a run whose every reader
// may read the run it is against: that run's benchmark is not deleted and
// is shared, or is its owner's while the regressed run's is private (and
// so read only by that owner and administrators). It is a scalar subquery
// of one row (both runs by primary key), not an EXISTS: PostgreSQL turned
// the EXISTS into a semi-join that read every run of every benchmark of
// the owner for each run a runs table shows, regressions or none, so a
// poll cost more the more benchmarks its owner had; a scalar subquery is
// asked only of the regression rows there are
// (docs/self-benchmarks.md#live-pages).
const regressionVisible = `coalesce((SELECT ab.deleted_at IS NULL
		AND (ab.visibility = 'shared' OR (ab.owner_id = cb.owner_id AND cb.visibility = 'private'))
	FROM runs ar JOIN benchmarks ab ON ab.id = ar.benchmark_id, runs cr JOIN benchmarks cb ON cb.id = cr.benchmark_id
	WHERE ar.id = g.against_run_id AND cr.id = g.run_id), false)`

// Leaderboard sorts.
const (
	SortQuality = "quality" // highest mean score first
	SortSpeed   = "speed"   // most output tokens/s first
	SortLatency = "latency" // lowest p95 end-to-end latency first
	SortCost    = "cost"    // cheapest per 1M output tokens first
	SortDate    = "date"    // newest first
	SortOldest  = "oldest"  // oldest first (a history)
)

// LeaderboardSorts are the sorts a leaderboard accepts.
var LeaderboardSorts = []string{SortQuality, SortSpeed, SortLatency, SortCost, SortDate}

// leaderboardKeys are each sort's key: ascending order of the key is the
// sort's order (a figure where higher is better is negated). A row without
// the figure sorts last.
var leaderboardKeys = map[string]string{
	SortQuality: `-x.quality`,
	SortSpeed:   `-x.tokens_per_s`,
	SortLatency: `x.e2e_p95`,
	SortCost:    `x.cost_per_1m`,
	SortDate:    `-extract(epoch FROM x.finished_at)`,
	SortOldest:  `extract(epoch FROM x.finished_at)`,
}

// LeaderboardCursor is where a page of a leaderboard ends: the last row's
// sort key (Missing when it had no figure) and run id.
type LeaderboardCursor struct {
	Missing bool
	Key     float64
	RunID   int64
}

// LeaderboardQuery selects and orders a dataset's leaderboard. Empty
// filters match everything.
type LeaderboardQuery struct {
	DatasetID int64
	Model     string
	Runtime   string
	Hardware  string
	// Scorer keeps the runs scored under this scorer identity and shows
	// their quality under it; empty shows each run's latest quality.
	Scorer string
	// Load keeps the runs measured under this load identity (run_stats'
	// load key): speed, latency and cost are ranked within one.
	Load string
	// From and To bound when the run finished: From ≤ finished < To.
	From, To *time.Time
	// Without are runs the ranking leaves out (conclude.LeaderboardLengths:
	// their measured lengths are too far from the ranked runs').
	Without []int64
	Sort    string
	// After continues after a previous page's last row.
	After *LeaderboardCursor
	// Limit is the rows at most (1 to 500).
	Limit int
}

// MaxLeaderboardRows bounds one page of a leaderboard or a history.
const MaxLeaderboardRows = 500

// LeaderboardRow is one completed run on the dataset with its figures;
// nil figures were not measured.
type LeaderboardRow struct {
	RunID         int64
	BenchmarkID   int64
	BenchmarkName string
	Model         string
	Runtime       string
	Hardware      string
	// Engine is the run's engine settings as jobs.Engine.Key writes them
	// ("" for the runtime's defaults): with the model, runtime and
	// hardware, the run's target.
	Engine     string
	FinishedAt time.Time
	Scorer     string
	// Load is the run's load identity key ("" when none was kept).
	Load string
	// MeanIn and MeanOut are the run's measured mean prompt and answer
	// lengths in tokens, as its load identity keeps them (0 when not
	// measured; RunLengths).
	MeanIn, MeanOut float64
	Quality         *float64
	QualityLo       *float64
	QualityHi       *float64
	// TokensPerS is the output tokens/s the run's conclusions test: the
	// kept steady window's mean where kept (steadySpeed), else the whole
	// run's.
	TokensPerS   *float64
	RequestsPerS *float64
	TTFTp50      *float64
	TTFTp95      *float64
	E2Ep50       *float64
	E2Ep95       *float64
	// CostPer1M is USD per 1M output tokens: the hardware's price per hour
	// ÷ (TokensPerS × 3600) × 10⁶, or for a remote provider's run its
	// token prices, as the engine prices it (conclude.RunCostPer1M).
	CostPer1M   *float64
	Regressions []Regression
	// Cursor continues the leaderboard after this row.
	Cursor LeaderboardCursor
}

// replicaShare is the share of its hardware profile's price a run's
// replica pays, in SQL for the leaderboard's cost sort: k ÷ G when its
// engine settings set tensor parallelism k on G GPUs, else 1. It is
// conclude.ReplicaPrice's rule (docs/benchmarks.md#tensor-parallelism-and-price),
// kept beside it by TestEngineSettingsSeparateTargets.
const replicaShare = `(CASE WHEN h.gpu_count > 0 AND coalesce(r.engine->>'tensor_parallel_size', r.engine->>'tp') IS NOT NULL
	THEN least(coalesce(r.engine->>'tensor_parallel_size', r.engine->>'tp')::float8, h.gpu_count) / h.gpu_count ELSE 1 END)`

// steadySpeed joins sp.tps, the output tokens/s a run's conclusions test
// (conclude's Figures.steadySpeed): the kept steady window's mean where
// run_stats kept it with an interval, else the whole run's; nil when none
// was generated. The leaderboard sorts and prices by it in SQL, so a page
// of it is one statement; TestFleetReportCostsARunAsTheVerdict holds it
// to the verdict's speed and cost.
const steadySpeed = `LEFT JOIN LATERAL (SELECT CASE
		WHEN (r.summary->>'output_tokens_per_s')::float8 > 0 AND rs.tps > 0 AND rs.tps < 'Infinity' AND rs.tps_df >= 1
			AND rs.tps_se IS NOT NULL AND rs.tps_se < 'Infinity' AND rs.tps_se > '-Infinity' THEN rs.tps
		ELSE nullif((r.summary->>'output_tokens_per_s')::float8, 0) END AS tps) sp ON true`

// leaderboardRuns are the runs a leaderboard's query keeps, with their
// run_stats (rs), providers' prices (pp), hardware (h), model (m), the
// speed they are ranked by (sp) and their quality under the scorer asked
// (rq): the FROM and WHERE of Leaderboard and LeaderboardLengths, whose
// arguments leaderboardArgs gives.
const leaderboardRuns = `FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id JOIN models m ON m.id = r.model_id
				JOIN hardware_profiles h ON h.slug = r.hardware_profile
				LEFT JOIN run_providers pp ON pp.run_id = r.id
				LEFT JOIN run_stats rs ON rs.run_id = r.id AND rs.attempt = r.attempt
				` + steadySpeed + `
				LEFT JOIN LATERAL (SELECT x.scorer_key, x.quality, x.quality_lo, x.quality_hi FROM run_qualities x
					WHERE x.run_id = r.id AND (@scorer = '' OR x.scorer_key = @scorer) ORDER BY x.scored_at DESC LIMIT 1) rq ON true
			WHERE b.dataset_id = @ds AND r.state = 'completed' AND (r.summary IS NOT NULL OR r.mode = 'imported') AND b.judges_run_id IS NULL
				AND` + benchmarkReadable + ` AND (@scorer = '' OR rq.scorer_key IS NOT NULL) AND (@load = '' OR rs.load_key = @load)
				AND (@model = '' OR m.name = @model) AND (@runtime = '' OR r.runtime = @runtime)
				AND (@hardware = '' OR r.hardware_profile = @hardware)
				AND (@from::timestamptz IS NULL OR coalesce(r.finished_at, r.created_at) >= @from)
				AND (@to::timestamptz IS NULL OR coalesce(r.finished_at, r.created_at) < @to)`

// leaderboardArgs are leaderboardRuns' arguments for the query q.
func leaderboardArgs(v Viewer, q LeaderboardQuery) pgx.NamedArgs {
	return pgx.NamedArgs{"ds": q.DatasetID, "viewer": v.UserID, "admin": v.Admin, "model": q.Model, "runtime": q.Runtime,
		"hardware": q.Hardware, "scorer": q.Scorer, "load": q.Load, "from": q.From, "to": q.To}
}

// RunLengths are a run's measured mean prompt and answer lengths in
// tokens, as its load identity keeps them (jobs.LoadIdentity.MeanIn and
// MeanOut; 0 when not measured).
type RunLengths struct {
	RunID           int64
	Model           string
	MeanIn, MeanOut float64
}

// LeaderboardLengths returns the measured lengths of every run the
// leaderboard's query q keeps (its filters, load and scorer; not its page
// or Without), by run id: conclude.LeaderboardLengths chooses from them the
// runs a ranking may set side by side.
func (qq *Queries) LeaderboardLengths(ctx context.Context, v Viewer, q LeaderboardQuery) ([]RunLengths, error) {
	rows, _ := qq.db.Query(ctx, `SELECT r.id, m.name, coalesce((rs.load_identity->>'mean_input_tokens')::float8, 0),
			coalesce((rs.load_identity->>'mean_output_tokens')::float8, 0)
			`+leaderboardRuns+`
		ORDER BY r.id`, leaderboardArgs(v, q))
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RunLengths, error) {
		var l RunLengths
		return l, row.Scan(&l.RunID, &l.Model, &l.MeanIn, &l.MeanOut)
	})
	return out, mapErr(err, "leaderboard lengths")
}

// Leaderboard returns the completed runs with figures on a dataset that the
// viewer may read (own benchmarks, shared ones, all for administrators;
// deleted benchmarks and judges' runs left out), filtered and sorted as
// asked, one page of at most q.Limit rows, in one statement.
func (qq *Queries) Leaderboard(ctx context.Context, v Viewer, q LeaderboardQuery) ([]LeaderboardRow, error) {
	key, ok := leaderboardKeys[q.Sort]
	if !ok {
		return nil, fmt.Errorf("leaderboard sort %q: %w", q.Sort, ErrNotFound)
	}
	args := leaderboardArgs(v, q)
	args["limit"], args["without"] = max(min(q.Limit, MaxLeaderboardRows), 1), append([]int64{}, q.Without...)
	after := ""
	if q.After != nil {
		after = ` WHERE (y.k IS NULL, coalesce(y.k, 0), -y.run_id) > (@amissing, @akey, -@arun::bigint)`
		args["amissing"], args["akey"], args["arun"] = q.After.Missing, q.After.Key, q.After.RunID
	}
	rows, _ := qq.db.Query(ctx, `SELECT y.run_id, y.benchmark_id, y.benchmark_name, y.model, y.runtime, y.hardware_profile, y.engine, y.finished_at,
			y.scorer, y.load_key, y.mean_in, y.mean_out, y.quality, y.quality_lo, y.quality_hi, y.tokens_per_s, y.requests_per_s, y.ttft_p50, y.ttft_p95,
			y.e2e_p50, y.e2e_p95, y.cost_per_1m, y.regressions, y.k IS NULL, coalesce(y.k, 0)
		FROM (SELECT x.*, `+key+` AS k FROM (
			SELECT r.id AS run_id, b.id AS benchmark_id, b.name AS benchmark_name, m.name AS model, r.runtime, r.hardware_profile,
				(SELECT coalesce(string_agg(e.key || '=' || e.value, ' ' ORDER BY e.key), '') FROM jsonb_each_text(r.engine) e) AS engine,
				coalesce(r.finished_at, r.created_at) AS finished_at, coalesce(rq.scorer_key, '') AS scorer,
				coalesce(rs.load_key, '') AS load_key,
				coalesce((rs.load_identity->>'mean_input_tokens')::float8, 0) AS mean_in,
				coalesce((rs.load_identity->>'mean_output_tokens')::float8, 0) AS mean_out,
				rq.quality, rq.quality_lo, rq.quality_hi,
				sp.tps AS tokens_per_s,
				nullif((r.summary->>'requests_per_s')::float8, 0) AS requests_per_s,
				nullif((r.summary->'ttft_ms'->>'p50')::float8, 0) AS ttft_p50,
				nullif((r.summary->'ttft_ms'->>'p95')::float8, 0) AS ttft_p95,
				nullif((r.summary->'e2e_ms'->>'p50')::float8, 0) AS e2e_p50,
				nullif((r.summary->'e2e_ms'->>'p95')::float8, 0) AS e2e_p95,
				CASE WHEN pp.input_per_1m IS NOT NULL AND pp.output_per_1m IS NOT NULL
					THEN (r.prompt_tokens * pp.input_per_1m::float8 + r.output_tokens * pp.output_per_1m::float8) / nullif(r.output_tokens, 0)
					ELSE h.price_per_hour::float8 * `+replicaShare+` / nullif(sp.tps * 3600, 0) * 1e6 END AS cost_per_1m,
				`+regressionsJSON+` AS regressions
			`+leaderboardRuns+` AND NOT (r.id = ANY(@without::bigint[]))
			) x) y`+after+`
		ORDER BY y.k IS NULL, y.k, y.run_id DESC LIMIT @limit`, args)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LeaderboardRow, error) {
		var l LeaderboardRow
		var regs []byte
		err := row.Scan(&l.RunID, &l.BenchmarkID, &l.BenchmarkName, &l.Model, &l.Runtime, &l.Hardware, &l.Engine, &l.FinishedAt,
			&l.Scorer, &l.Load, &l.MeanIn, &l.MeanOut, &l.Quality, &l.QualityLo, &l.QualityHi, &l.TokensPerS, &l.RequestsPerS, &l.TTFTp50, &l.TTFTp95,
			&l.E2Ep50, &l.E2Ep95, &l.CostPer1M, &regs, &l.Cursor.Missing, &l.Cursor.Key)
		if err != nil {
			return l, err
		}
		l.Cursor.RunID = l.RunID
		return l, json.Unmarshal(regs, &l.Regressions)
	})
	return out, mapErr(err, "leaderboard")
}

// LeaderboardFacets are the models, runtimes and hardware profiles of the
// completed runs on a dataset that the viewer may read: the choices of
// the leaderboard's filters.
type LeaderboardFacets struct {
	Models, Runtimes, Hardware []string
	// Scorers are the scorer identities the runs were scored under, the
	// most used first: quality is ranked within one of them.
	Scorers []string
	// Loads are the load identities the runs were measured under, the
	// most used first: speed, latency and cost are ranked within one.
	Loads []string
}

// LeaderboardFacets lists the filter choices of a dataset's leaderboard.
func (q *Queries) LeaderboardFacets(ctx context.Context, v Viewer, datasetID int64) (LeaderboardFacets, error) {
	var f LeaderboardFacets
	err := q.db.QueryRow(ctx, `SELECT coalesce(array_agg(DISTINCT m.name ORDER BY m.name), '{}'),
			coalesce(array_agg(DISTINCT r.runtime ORDER BY r.runtime), '{}'),
			coalesce(array_agg(DISTINCT r.hardware_profile ORDER BY r.hardware_profile), '{}')
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id JOIN models m ON m.id = r.model_id
		WHERE b.dataset_id = @ds AND r.state = 'completed' AND (r.summary IS NOT NULL OR r.mode = 'imported') AND b.judges_run_id IS NULL
			AND`+benchmarkReadable,
		pgx.NamedArgs{"ds": datasetID, "viewer": v.UserID, "admin": v.Admin}).Scan(&f.Models, &f.Runtimes, &f.Hardware)
	if err != nil {
		return f, mapErr(err, "leaderboard facets")
	}
	err = q.db.QueryRow(ctx, `SELECT coalesce(array_agg(k ORDER BY n DESC, first, k), '{}') FROM (
			SELECT x.scorer_key AS k, count(*) AS n, min(x.scored_at) AS first
			FROM run_qualities x JOIN runs r ON r.id = x.run_id JOIN benchmarks b ON b.id = r.benchmark_id
			WHERE b.dataset_id = @ds AND r.state = 'completed' AND b.judges_run_id IS NULL AND`+benchmarkReadable+`
			GROUP BY x.scorer_key) s`,
		pgx.NamedArgs{"ds": datasetID, "viewer": v.UserID, "admin": v.Admin}).Scan(&f.Scorers)
	if err != nil {
		return f, mapErr(err, "leaderboard scorers")
	}
	err = q.db.QueryRow(ctx, `SELECT coalesce(array_agg(k ORDER BY n DESC, first, k), '{}') FROM (
			SELECT s.load_key AS k, count(*) AS n, min(r.id) AS first
			FROM run_stats s JOIN runs r ON r.id = s.run_id AND r.attempt = s.attempt JOIN benchmarks b ON b.id = r.benchmark_id
			WHERE b.dataset_id = @ds AND r.state = 'completed' AND b.judges_run_id IS NULL AND`+benchmarkReadable+`
			GROUP BY s.load_key) s`,
		pgx.NamedArgs{"ds": datasetID, "viewer": v.UserID, "admin": v.Admin}).Scan(&f.Loads)
	return f, mapErr(err, "leaderboard loads")
}

// RegressionRuns returns the rows a regression check of run id reads:
// every run of its model in its own benchmark, whatever their state (the
// check waits for all of a target's repeats), then the completed runs of
// its model with figures kept for their current attempt in up to
// benchmarks other benchmarks on its dataset created before its own,
// newest benchmark first, each benchmark's runs in the order they were
// planned; only benchmarks the run's owner may read (deleted benchmarks
// and judges' runs left out). Which of them are the run's target, and
// which target is comparable, the conclusions engine decides
// (conclude.Regressions): the model only narrows the read. None when run
// id does not exist.
func (q *Queries) RegressionRuns(ctx context.Context, runID int64, benchmarks int) ([]RunFigures, error) {
	rows, _ := q.db.Query(ctx, `WITH cur AS (
			SELECT r.model_id, r.benchmark_id, b.dataset_id, b.owner_id, b.created_at
			FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = @run),
		earlier AS (
			SELECT b.id, b.created_at FROM benchmarks b, cur
			WHERE b.dataset_id = cur.dataset_id AND b.judges_run_id IS NULL AND b.deleted_at IS NULL
				AND (b.owner_id = cur.owner_id OR b.visibility = 'shared')
				AND (b.created_at, b.id) < (cur.created_at, cur.benchmark_id)
				AND EXISTS (SELECT 1 FROM runs x JOIN run_stats xs ON xs.run_id = x.id AND xs.attempt = x.attempt
					WHERE x.benchmark_id = b.id AND x.model_id = cur.model_id AND x.state = 'completed' AND x.summary IS NOT NULL)
			ORDER BY b.created_at DESC, b.id DESC LIMIT @limit)
		SELECT `+runFiguresColumns+runFiguresFrom+`
		JOIN cur ON cur.model_id = r.model_id
		LEFT JOIN earlier e ON e.id = r.benchmark_id
		WHERE r.benchmark_id = cur.benchmark_id
			OR e.id IS NOT NULL AND r.state = 'completed' AND r.summary IS NOT NULL
				AND EXISTS (SELECT 1 FROM run_stats ps WHERE ps.run_id = r.id AND ps.attempt = r.attempt)
		ORDER BY r.benchmark_id = cur.benchmark_id DESC, e.created_at DESC, r.benchmark_id DESC, r.id`,
		pgx.NamedArgs{"run": runID, "limit": max(benchmarks, 1)})
	out, err := pgx.CollectRows(rows, scanRunFigures)
	if err != nil || len(out) == 0 {
		return nil, mapErr(err, "regression runs")
	}
	return q.withConclusions(ctx, out)
}

// RunsFlaggedAgainst returns the runs holding a regression flag against
// any of runIDs, in id order: those to check again when one of runIDs is
// rescored.
func (q *Queries) RunsFlaggedAgainst(ctx context.Context, runIDs []int64) ([]int64, error) {
	if len(runIDs) == 0 {
		return nil, nil
	}
	rows, _ := q.db.Query(ctx, `SELECT DISTINCT run_id FROM run_regressions
		WHERE against_run_id = ANY(@ids) AND NOT run_id = ANY(@ids) ORDER BY run_id`, pgx.NamedArgs{"ids": runIDs})
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return out, mapErr(err, "runs flagged against")
}

// ReplaceRegressions stores what a check of run found: its earlier
// regressions are replaced by regs (none: not a regression).
func (s *Store) ReplaceRegressions(ctx context.Context, runID int64, regs []Regression) error {
	return s.InTx(ctx, func(q *Queries) error {
		if _, err := q.db.Exec(ctx, `DELETE FROM run_regressions WHERE run_id = @run`, pgx.NamedArgs{"run": runID}); err != nil {
			return mapErr(err, "clear regressions")
		}
		for _, g := range regs {
			_, err := q.db.Exec(ctx, `INSERT INTO run_regressions (run_id, metric, against_run_id, delta, p_value, detail, detail_said)
				VALUES (@run, @metric, @against, @delta, @p, @detail, @said)`,
				pgx.NamedArgs{"run": runID, "metric": g.Metric, "against": g.AgainstRunID, "delta": g.Delta, "p": g.PValue,
					"detail": g.Detail, "said": nullJSON(g.DetailSaid)})
			if err != nil {
				return mapErr(err, "save regression")
			}
		}
		return nil
	})
}

// BenchmarkChange is what the owner changes on a benchmark; nil leaves a
// field as it is.
type BenchmarkChange struct {
	Name       *string
	Visibility *string
	// VerdictScorer is the scorer identity the verdict ranks quality by
	// ("": the one most runs were scored under).
	VerdictScorer *string
}

// nullJSON is raw as a jsonb parameter, NULL when empty.
func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}
