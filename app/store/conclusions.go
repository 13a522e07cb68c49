package store

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/stats"
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

// QualityPairs returns the paired comparisons under scorer identity key
// of every two of the runs that have a quality under it (A the lower id).
// A pair compared before is read; one not yet is computed from the runs'
// stored item scores (stats.PairScores) and kept, so a page never reads
// the results to draw it. Pairs with no item in common are absent.
func (q *Queries) QualityPairs(ctx context.Context, key string, runIDs []int64) ([]QualityPair, error) {
	ids := slices.Clone(runIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var want [][2]int64
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			want = append(want, [2]int64{a, b})
		}
	}
	return q.qualityPairs(ctx, key, want)
}

// QualityPairsWith returns the paired comparisons under scorer identity
// key of run a with each of others, as QualityPairs does: what a verdict
// needs, its leader against the rest.
func (q *Queries) QualityPairsWith(ctx context.Context, key string, a int64, others []int64) ([]QualityPair, error) {
	var want [][2]int64
	for _, b := range others {
		if b != a && !slices.Contains(want, [2]int64{min(a, b), max(a, b)}) {
			want = append(want, [2]int64{min(a, b), max(a, b)})
		}
	}
	return q.qualityPairs(ctx, key, want)
}

// qualityPairs reads the wanted pairs (each lower id first) that were
// kept and computes and keeps the others.
func (q *Queries) qualityPairs(ctx context.Context, key string, want [][2]int64) ([]QualityPair, error) {
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
	have := map[[2]int64]bool{}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (QualityPair, error) {
		var p QualityPair
		err := row.Scan(&p.A, &p.B, &p.ScorerKey, &p.Items, &p.Mean, &p.Lo, &p.Hi, &p.P, &p.Test, &p.OnlyA, &p.OnlyB)
		have[[2]int64{p.A, p.B}] = true
		return p, err
	})
	if err != nil {
		return nil, mapErr(err, "quality pairs")
	}
	var missing [][2]int64
	var ids []int64 // the runs of the pairs not kept yet
	for _, w := range want {
		if !have[w] {
			missing = append(missing, w)
			ids = append(ids, w[0], w[1])
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	vecs, err := q.RunItemScores(ctx, key, ids)
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	for _, m := range missing {
		va, okA := vecs[m[0]]
		vb, okB := vecs[m[1]]
		if !okA || !okB {
			continue
		}
		xa, xb, onlyA, onlyB := stats.PairScores(va.Idx, va.Scores, vb.Idx, vb.Scores)
		if len(xa) == 0 {
			continue
		}
		r := stats.ComparePaired(xa, xb, stats.PairSeed(m[0], m[1]))
		p := QualityPair{A: m[0], B: m[1], ScorerKey: key, Items: r.N, Mean: r.Mean, Lo: r.Lo, Hi: r.Hi, P: r.P, Test: r.Test, OnlyA: onlyA, OnlyB: onlyB}
		out = append(out, p)
		b.Queue(`INSERT INTO quality_pairs (run_a, run_b, scorer_key, items, mean, lo, hi, p, test, only_a, only_b)
			VALUES (@a, @b, @key, @items, @mean, @lo, @hi, @p, @test, @only_a, @only_b) ON CONFLICT DO NOTHING`,
			pgx.NamedArgs{"a": p.A, "b": p.B, "key": key, "items": p.Items, "mean": p.Mean, "lo": p.Lo, "hi": p.Hi, "p": p.P,
				"test": p.Test, "only_a": p.OnlyA, "only_b": p.OnlyB})
	}
	if b.Len() > 0 {
		// A quality replaced meanwhile drops its pairs' rows through the
		// foreign key; the insert then fails and the pair is computed again
		// next time.
		if err := q.db.SendBatch(ctx, b).Close(); err != nil && !isForeignKeyViolation(err) {
			return nil, mapErr(err, "keep quality pairs")
		}
	}
	return out, nil
}

// RunStat is a run's figures with their intervals (run_stats).
type RunStat struct {
	RunID        int64
	Load         jobs.LoadIdentity
	OK           int
	Batches      int
	TPS, RPS     stats.Estimate
	Goodput      stats.Estimate
	HasGoodput   bool
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
		s.TPS, s.RPS = estimate(tps, tpsSE, tpsDF, s.Batches), estimate(rps, rpsSE, rpsDF, s.Batches)
		s.Goodput, s.HasGoodput = estimate(gp, gpSE, gpDF, s.Batches), gp != nil
		s.E2EP95, s.TTFTP95 = quantile(e2e, e2eLo, e2eHi, e2eCov, s.OK), quantile(ttft, ttftLo, ttftHi, ttftCov, s.OK)
		out[s.RunID] = s
		s = RunStat{}
		return nil
	})
	return out, mapErr(err, "run stats")
}

func estimate(mean, se, df *float64, n int) stats.Estimate {
	if mean == nil {
		return stats.Estimate{}
	}
	e := stats.Estimate{Mean: *mean, Lo: *mean, Hi: *mean, N: n}
	if se != nil && df != nil && *df >= 1 {
		e.SE, e.DF = *se, *df
		h := stats.StudentTQuantile(0.975, e.DF) * e.SE
		e.Lo, e.Hi = e.Mean-h, e.Mean+h
	}
	return e
}

func quantile(v, lo, hi *float64, coverage float64, n int) *QuantileInterval {
	if v == nil || lo == nil || hi == nil {
		return nil
	}
	return &QuantileInterval{N: n, P95: *v, Lo: *lo, Hi: *hi, Coverage: coverage}
}

// ComputeRunStats reads a finished run's results once and keeps its
// figures with their intervals (run_stats) for its current attempt:
// output tokens/s, requests/s and goodput by batch means over the steady
// window (stats.BatchMeansRate), p95 E2E and TTFT with their
// distribution-free intervals, answer lengths, and its load identity.
// Warm-up requests are left out; so is a sweep's rate interval, whose
// window spans several loads (its steps are compared one by one).
func (s *Store) ComputeRunStats(ctx context.Context, runID int64) error {
	var attempt int
	var manifest json.RawMessage
	var datasetID int64
	var state string
	var shotsK int
	var shotsSeed int64
	var exemplars string
	err := s.db.QueryRow(ctx, `SELECT r.attempt, r.state, b.manifest, b.dataset_id, r.fewshot_k, r.fewshot_seed, r.fewshot_exemplars
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
		WHERE r.id = @run`, pgx.NamedArgs{"run": runID}).Scan(&attempt, &state, &manifest, &datasetID, &shotsK, &shotsSeed, &exemplars)
	if err != nil {
		return mapErr(err, "run for stats")
	}
	if state != "completed" {
		return nil
	}
	var m struct {
		Load jobs.LoadProfile `json:"load"`
		SLO  jobs.SLO         `json:"slo"`
	}
	_ = json.Unmarshal(manifest, &m)
	rs, err := s.statsResults(ctx, runID, m.SLO)
	if err != nil {
		return err
	}
	f := collectStatsFigures(rs)
	load := jobs.NewLoadIdentity(manifest, datasetID, f.meanIn, f.meanOut)
	load.FewShot = strings.TrimSpace(FewShotKey(shotsK, shotsSeed, exemplars))
	loadJSON, _ := json.Marshal(load)
	row := pgx.NamedArgs{"run": runID, "attempt": attempt, "key": load.Key(), "load": loadJSON, "ok": len(f.outs)}
	f.fill(row, m.Load.Profile != "sweep")
	_, err = s.db.Exec(ctx, `INSERT INTO run_stats (run_id, attempt, load_key, load_identity, ok, batches,
			tps, tps_se, tps_df, rps, rps_se, rps_df, goodput, goodput_se, goodput_df,
			e2e_p95, e2e_p95_lo, e2e_p95_hi, e2e_p95_coverage, ttft_p95, ttft_p95_lo, ttft_p95_hi, ttft_p95_coverage,
			output_tokens_p50, output_tokens_p90, output_tokens_max)
		VALUES (@run, @attempt, @key, @load, @ok, coalesce(@batches::int, 0), @tps, @tps_se, @tps_df, @rps, @rps_se, @rps_df,
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

// statsResult is what ComputeRunStats reads of one result.
type statsResult struct {
	sent, e2e       float64
	ok, good        bool
	ttft            *float64
	tokens, prompts int
}

// statsResults reads a run's results outside warm-up, good meaning the
// request met every SLO.
func (s *Store) statsResults(ctx context.Context, runID int64, slo jobs.SLO) ([]statsResult, error) {
	args := sloBounds(slo)
	args["run"] = runID
	rows, _ := s.db.Query(ctx, `SELECT extract(epoch FROM sent_at)::float8, status = 'ok', coalesce(e2e_ms, 0), ttft_ms,
			completion_tokens, prompt_tokens, `+sloFilter+`
		FROM results WHERE run_id = @run AND phase <> 'warmup'`, args)
	var rs []statsResult
	var r statsResult
	if _, err := pgx.ForEachRow(rows, []any{&r.sent, &r.ok, &r.e2e, &r.ttft, &r.tokens, &r.prompts, &r.good}, func() error {
		rs = append(rs, r)
		return nil
	}); err != nil {
		return nil, mapErr(err, "results for stats")
	}
	return rs, nil
}

// statsFigures are a run's results as its statistics take them: events
// (completions, tokens and requests meeting the SLOs, at the time each
// finished) over the window start–end (the first send to the last send),
// and the successful requests' latencies and lengths.
type statsFigures struct {
	tokens, reqs, good []stats.Event
	start, end         float64
	e2es, ttfts, outs  []float64
	meanIn, meanOut    float64
}

// collectStatsFigures gathers the figures of a run's results.
func collectStatsFigures(rs []statsResult) statsFigures {
	f := statsFigures{start: math.Inf(1), end: math.Inf(-1)}
	var sumIn, sumOut float64
	lastDone := math.Inf(-1)
	for _, r := range rs {
		done := r.sent + r.e2e/1000
		f.start, f.end, lastDone = min(f.start, r.sent), max(f.end, r.sent), max(lastDone, done)
		f.reqs = append(f.reqs, stats.Event{T: done, Amount: 1})
		if !r.ok {
			continue
		}
		f.tokens = append(f.tokens, stats.Event{T: done, Amount: float64(r.tokens)})
		if r.good {
			f.good = append(f.good, stats.Event{T: done, Amount: 1})
		}
		f.e2es = append(f.e2es, r.e2e)
		if r.ttft != nil {
			f.ttfts = append(f.ttfts, *r.ttft)
		}
		f.outs = append(f.outs, float64(r.tokens))
		sumIn += float64(r.prompts)
		sumOut += float64(r.tokens)
	}
	if n := float64(len(f.outs)); n > 0 {
		f.meanIn, f.meanOut = sumIn/n, sumOut/n
	}
	// The window ends at the last request sent: from there on fewer and
	// fewer requests are in flight (a closed loop drains, an open one has
	// stopped offering), and a straggler finishing last would stretch the
	// window over near-empty batches. When most requests were in flight
	// at once (fewer than half the answers came before the last send)
	// there is no steady stretch to cut; the window is the whole run.
	before := 0
	for _, e := range f.reqs {
		if e.T <= f.end {
			before++
		}
	}
	if !(f.end > f.start) || 2*before < len(f.reqs) {
		f.end = lastDone
	}
	return f
}

// fill sets the figures' columns of run_stats in row (nil for those
// without a figure); rates only with withRates.
func (f statsFigures) fill(row pgx.NamedArgs, withRates bool) {
	if withRates {
		batches := 0
		for name, evs := range map[string][]stats.Event{"tps": f.tokens, "rps": f.reqs, "goodput": f.good} {
			e, ok := stats.BatchMeansRate(evs, f.start, f.end)
			if !ok {
				continue
			}
			batches = max(batches, e.N)
			row[name], row[name+"_se"], row[name+"_df"] = e.Mean, e.SE, e.DF
		}
		row["batches"] = batches
	}
	setQuantile(row, "e2e", f.e2es)
	setQuantile(row, "ttft", f.ttfts)
	if outs := f.outs; len(outs) > 0 {
		sort.Float64s(outs)
		row["out_p50"], row["out_p90"], row["out_max"] = stats.Percentile(outs, 0.5), stats.Percentile(outs, 0.9), outs[len(outs)-1]
	}
	for _, k := range []string{"tps", "tps_se", "tps_df", "rps", "rps_se", "rps_df", "goodput", "goodput_se", "goodput_df", "batches",
		"e2e", "e2e_lo", "e2e_hi", "e2e_cov", "ttft", "ttft_lo", "ttft_hi", "ttft_cov", "out_p50", "out_p90", "out_max"} {
		if _, ok := row[k]; !ok {
			row[k] = nil
		}
	}
}

// setQuantile sets p95, its lower and upper bound and their coverage of
// xs under name: the exact binomial order-statistic interval
// (stats.QuantileInterval at 95 %); a p95 over too few values for one
// (fewer than stats.MinQuantileN) has no bounds and is not tested.
func setQuantile(row pgx.NamedArgs, name string, xs []float64) {
	if len(xs) == 0 {
		return
	}
	sort.Float64s(xs)
	row[name] = stats.Percentile(xs, 0.95)
	if ci, ok := stats.QuantileInterval(xs, 0.95, 0.95); ok {
		row[name+"_lo"], row[name+"_hi"], row[name+"_cov"] = ci.Lo, ci.Hi, ci.Coverage
	}
}

// isForeignKeyViolation says whether err is PostgreSQL's foreign key
// violation (23503).
func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}

// PairRunQualities computes and keeps the paired comparisons of run
// runID's qualities with every other run of its benchmark scored under
// the same identity, when the run is scored, so that the benchmark's
// verdict and recommendation read them from quality_pairs instead of
// computing them on a page's request.
func (s *Store) PairRunQualities(ctx context.Context, runID int64) error {
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
		return mapErr(err, "run quality peers")
	}
	for key, ids := range peers {
		// Only this run's pairs: the others' with each other were kept
		// when they were scored.
		if _, err := s.QualityPairsWith(ctx, key, runID, ids); err != nil {
			return err
		}
	}
	return nil
}
