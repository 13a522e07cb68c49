package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrJudgeExists is returned when a benchmark's judge scorer has already
// started the judging of a run.
var ErrJudgeExists = errors.New("this run's judging has already started")

// JudgedRun is a run about to be judged, as the viewer may see it.
type JudgedRun struct {
	Run
	DatasetID int64
	OwnerID   int64
	// IsJudge: the run is itself a judge's run.
	IsJudge bool
}

// JudgedRunByID returns a run the viewer may see (own, or any for admins)
// with what judging it needs.
func (q *Queries) JudgedRunByID(ctx context.Context, v Viewer, runID int64) (JudgedRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+runColumns+`, b.dataset_id, b.owner_id, b.judges_run_id IS NOT NULL
		FROM runs r JOIN models m ON m.id = r.model_id LEFT JOIN agents a ON a.id = r.agent_id JOIN benchmarks b ON b.id = r.benchmark_id
		WHERE r.id = @run AND`+benchmarkWritable, pgx.NamedArgs{"run": runID, "viewer": v.UserID, "admin": v.Admin})
	out, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (JudgedRun, error) {
		var r JudgedRun
		err := row.Scan(append(r.fields(), &r.DatasetID, &r.OwnerID, &r.IsJudge)...)
		return r, err
	})
	return out, mapErr(err, "judged run")
}

// JudgeSource is one item to judge: the dataset item and the answers of
// the judged run(s).
type JudgeSource struct {
	Idx       int
	CustomID  string
	Request   json.RawMessage
	Reference json.RawMessage
	StatusA   string
	OutputA   string
	StatusB   string
	OutputB   string
	// SimA and SimB say whether the server wrote the item's answer for
	// the simulated runtime in run a (b): its output was meant to be
	// the simulated model's right or wrong answer.
	SimA, SimB bool
}

// JudgeSources returns the items run a answered (and, when b is not 0,
// that run b answered too), in item order, with the dataset item.
func (q *Queries) JudgeSources(ctx context.Context, a, b int64) ([]JudgeSource, error) {
	rows, _ := q.db.Query(ctx, `SELECT ra.idx, i.custom_id, i.request, coalesce(i.reference, 'null'), ra.status, ra.output,
			coalesce(rb.status, ''), coalesce(rb.output, ''), sa.run_id IS NOT NULL, sb.run_id IS NOT NULL
		FROM results ra JOIN runs ru ON ru.id = ra.run_id JOIN benchmarks bm ON bm.id = ru.benchmark_id
		JOIN dataset_items i ON i.dataset_id = bm.dataset_id AND i.idx = ra.idx
		LEFT JOIN results rb ON rb.run_id = @b AND rb.idx = ra.idx
		LEFT JOIN sim_answers sa ON sa.run_id = ra.run_id AND sa.idx = ra.idx
		LEFT JOIN sim_answers sb ON sb.run_id = @b AND sb.idx = ra.idx
		WHERE ra.run_id = @a AND (@b = 0 OR rb.run_id IS NOT NULL) ORDER BY ra.idx`, pgx.NamedArgs{"a": a, "b": b})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (JudgeSource, error) {
		var s JudgeSource
		err := row.Scan(&s.Idx, &s.CustomID, &s.Request, &s.Reference, &s.StatusA, &s.OutputA, &s.StatusB, &s.OutputB, &s.SimA, &s.SimB)
		return s, err
	})
	return out, mapErr(err, "judge sources")
}

// CreateJudgeBenchmark inserts the benchmark that holds a judge run; it
// belongs to the run it judges and stays out of benchmark lists.
func (q *Queries) CreateJudgeBenchmark(ctx context.Context, ownerID int64, name string, datasetID, judgedRunID int64, manifest json.RawMessage) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO benchmarks (owner_id, name, dataset_id, manifest, judges_run_id)
		VALUES (@owner, @name, @dataset, @manifest, @judged) RETURNING id`,
		pgx.NamedArgs{"owner": ownerID, "name": name, "dataset": datasetID, "manifest": string(manifest), "judged": judgedRunID}).Scan(&id)
	return id, mapErr(err, "create judge benchmark")
}

// JudgeRun is a judge's run and what it judges.
type JudgeRun struct {
	RunID    int64
	Mode     string
	RunA     int64
	RunB     *int64
	Rubric   string
	Template string
	ScaleMin int
	ScaleMax int
	Origin   string
	State    string
	Error    string
	// Pairwise outcome from RunA's side.
	Wins, Ties, Losses, Inconsistent, Unparsed int
	CreatedAt                                  time.Time
	JudgedAt                                   *time.Time
	// The judge run's own state and figures.
	Judge Run
	// Single: the judged items that got a score, and their mean.
	Scored  int
	Quality *float64
}

// WinRate is RunA's share of wins over the decided pairs and ties
// (MT-Bench's win rate), nil with none.
func (j JudgeRun) WinRate() *float64 {
	n := j.Wins + j.Ties + j.Losses
	if n == 0 {
		return nil
	}
	v := float64(j.Wins) / float64(n)
	return &v
}

// WinRateHalfTies counts a tie as half a win (MT-Bench's adjusted win
// rate), nil with no pairs.
func (j JudgeRun) WinRateHalfTies() *float64 {
	n := j.Wins + j.Ties + j.Losses
	if n == 0 {
		return nil
	}
	v := (float64(j.Wins) + 0.5*float64(j.Ties)) / float64(n)
	return &v
}

// NewJudgeRun is the row that makes a run a judge's run.
type NewJudgeRun struct {
	RunID    int64
	Mode     string
	RunA     int64
	RunB     *int64
	Rubric   string
	Template string
	ScaleMin int
	ScaleMax int
	Origin   string
}

// CreateJudgeRun records what a judge run judges. A second judging by a
// benchmark's scorer of the same run gets ErrJudgeExists.
func (q *Queries) CreateJudgeRun(ctx context.Context, j NewJudgeRun) error {
	_, err := q.db.Exec(ctx, `INSERT INTO judge_runs (run_id, mode, run_a, run_b, rubric, template, scale_min, scale_max, origin)
		VALUES (@run, @mode, @a, @b, @rubric, @template, @lo, @hi, @origin)`,
		pgx.NamedArgs{"run": j.RunID, "mode": j.Mode, "a": j.RunA, "b": j.RunB, "rubric": j.Rubric, "template": j.Template,
			"lo": j.ScaleMin, "hi": j.ScaleMax, "origin": j.Origin})
	return mapErr(err, fmt.Sprintf("judge run %d", j.RunA))
}

const judgeRunColumns = `j.run_id, j.mode, j.run_a, j.run_b, j.rubric, j.template, j.scale_min, j.scale_max, j.origin, j.state,
	j.error, j.wins, j.ties, j.losses, j.inconsistent, j.unparsed, j.created_at, j.judged_at, ` + runColumns + `,
	(SELECT count(*) FROM judgments g WHERE g.judge_run_id = j.run_id AND g.score IS NOT NULL),
	(SELECT avg(g.score) FROM judgments g WHERE g.judge_run_id = j.run_id AND g.ord = 'single')`

const judgeRunFrom = ` FROM judge_runs j JOIN runs r ON r.id = j.run_id JOIN models m ON m.id = r.model_id
	LEFT JOIN agents a ON a.id = r.agent_id JOIN benchmarks b ON b.id = r.benchmark_id `

func scanJudgeRun(row pgx.CollectableRow) (JudgeRun, error) {
	var j JudgeRun
	err := row.Scan(append([]any{&j.RunID, &j.Mode, &j.RunA, &j.RunB, &j.Rubric, &j.Template, &j.ScaleMin, &j.ScaleMax,
		&j.Origin, &j.State, &j.Error, &j.Wins, &j.Ties, &j.Losses, &j.Inconsistent, &j.Unparsed, &j.CreatedAt, &j.JudgedAt},
		append(j.Judge.fields(), &j.Scored, &j.Quality)...)...)
	return j, err
}

// JudgeRunByID returns the judge run with this run id; ErrNotFound when
// the run is not a judge's.
func (q *Queries) JudgeRunByID(ctx context.Context, runID int64) (JudgeRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+judgeRunColumns+judgeRunFrom+`WHERE j.run_id = @run`, pgx.NamedArgs{"run": runID})
	j, err := pgx.CollectExactlyOneRow(rows, scanJudgeRun)
	return j, mapErr(err, "judge run")
}

// JudgeRunsOf lists the judgings of a run (as the run graded, or either
// side of a pair) that the viewer may see, newest first.
func (q *Queries) JudgeRunsOf(ctx context.Context, v Viewer, runID int64) ([]JudgeRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+judgeRunColumns+judgeRunFrom+`WHERE (j.run_a = @run OR j.run_b = @run)
		AND`+benchmarkReadable+`ORDER BY j.run_id DESC LIMIT 50`,
		pgx.NamedArgs{"run": runID, "viewer": v.UserID, "admin": v.Admin})
	out, err := pgx.CollectRows(rows, scanJudgeRun)
	return out, mapErr(err, "judge runs of run")
}

// JudgeItem is one judge prompt: the judged item and order it stands
// for, and the judge's answer when there is one.
type JudgeItem struct {
	Idx    int    // the judged item
	Order  string // single, ab or ba
	Status string // the judge's result status; "" when it has none
	Output string
}

// JudgeItems returns every prompt of a judge run with the judge's answer,
// in prompt order.
func (q *Queries) JudgeItems(ctx context.Context, judgeRunID int64) ([]JudgeItem, error) {
	rows, _ := q.db.Query(ctx, `SELECT (i.reference->>'idx')::int, i.reference->>'ord', coalesce(res.status, ''), coalesce(res.output, '')
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id JOIN dataset_items i ON i.dataset_id = b.dataset_id
		LEFT JOIN results res ON res.run_id = r.id AND res.idx = i.idx
		WHERE r.id = @run ORDER BY i.idx`, pgx.NamedArgs{"run": judgeRunID})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (JudgeItem, error) {
		var it JudgeItem
		err := row.Scan(&it.Idx, &it.Order, &it.Status, &it.Output)
		return it, err
	})
	return out, mapErr(err, "judge items")
}

// Judgment is the judge's verdict on one item in one order.
type Judgment struct {
	JudgeRunID  int64
	JudgedRunID int64
	Idx         int
	Order       string
	Score       *float64
	Rating      *float64
	Verdict     string
	Rationale   string
	Raw         string
}

// JudgingOutcome is everything a finished judging writes, at once.
type JudgingOutcome struct {
	JudgeRunID int64
	State      string // judged or failed
	Error      string
	Judgments  []Judgment
	// Pairwise counts.
	Wins, Ties, Losses, Inconsistent, Unparsed int
	// Single: the judged run's item scores (nil: unscored) and quality.
	JudgedRunID int64
	Idx         []int32
	Scores      []*float64
	Quality     *RunQuality
}

// SaveJudging stores a judging's verdicts (replacing any earlier ones of
// the same judge run), its counts and, for a single grading, the judged
// run's item scores and quality, in one transaction.
func (s *Store) SaveJudging(ctx context.Context, o JudgingOutcome) error {
	return s.InTx(ctx, func(tx *Queries) error {
		if _, err := tx.db.Exec(ctx, `DELETE FROM judgments WHERE judge_run_id = @run`, pgx.NamedArgs{"run": o.JudgeRunID}); err != nil {
			return mapErr(err, "drop judgments")
		}
		var row [9]any
		i := 0
		src := &copyRows{next: func() ([]any, bool, error) {
			if i == len(o.Judgments) {
				return nil, false, nil
			}
			j := o.Judgments[i]
			i++
			row = [9]any{o.JudgeRunID, j.JudgedRunID, j.Idx, j.Order, j.Score, j.Rating, j.Verdict, j.Rationale, j.Raw}
			return row[:], true, nil
		}}
		if _, err := tx.db.CopyFrom(ctx, pgx.Identifier{"judgments"},
			[]string{"judge_run_id", "judged_run_id", "idx", "ord", "score", "rating", "verdict", "rationale", "raw"}, src); err != nil {
			return mapErr(err, "copy judgments")
		}
		if _, err := tx.db.Exec(ctx, `UPDATE judge_runs SET state = @state, error = @error, wins = @wins, ties = @ties,
				losses = @losses, inconsistent = @inconsistent, unparsed = @unparsed, judged_at = now() WHERE run_id = @run`,
			pgx.NamedArgs{"run": o.JudgeRunID, "state": o.State, "error": o.Error, "wins": o.Wins, "ties": o.Ties, "losses": o.Losses,
				"inconsistent": o.Inconsistent, "unparsed": o.Unparsed}); err != nil {
			return mapErr(err, "save judge run")
		}
		if o.Quality == nil {
			return nil
		}
		return tx.saveScores(ctx, o.JudgedRunID, o.Idx, nil, o.Scores, *o.Quality)
	})
}

// ItemJudgment is a verdict on one item of a run, as its pages show it.
type ItemJudgment struct {
	Judgment
	Mode       string
	RunA       int64
	RunB       *int64
	Rubric     string
	ScaleMin   int
	ScaleMax   int
	JudgeModel string
	JudgeSim   bool
}

// ItemJudgments returns the verdicts on item idx of a run (graded alone,
// or as either side of a pair), newest judging first.
func (q *Queries) ItemJudgments(ctx context.Context, runID int64, idx int) ([]ItemJudgment, error) {
	rows, _ := q.db.Query(ctx, `SELECT g.judge_run_id, g.judged_run_id, g.idx, g.ord, g.score, g.rating, g.verdict, g.rationale, g.raw,
			j.mode, j.run_a, j.run_b, j.rubric, j.scale_min, j.scale_max, m.name, r.runtime = 'sim'
		FROM judgments g JOIN judge_runs j ON j.run_id = g.judge_run_id JOIN runs r ON r.id = j.run_id JOIN models m ON m.id = r.model_id
		WHERE g.idx = @idx AND (j.run_a = @run OR j.run_b = @run)
		ORDER BY g.judge_run_id DESC, array_position(ARRAY['final', 'single', 'ab', 'ba'], g.ord) LIMIT 200`,
		pgx.NamedArgs{"run": runID, "idx": idx})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ItemJudgment, error) {
		var j ItemJudgment
		err := row.Scan(&j.JudgeRunID, &j.JudgedRunID, &j.Idx, &j.Order, &j.Score, &j.Rating, &j.Verdict, &j.Rationale, &j.Raw,
			&j.Mode, &j.RunA, &j.RunB, &j.Rubric, &j.ScaleMin, &j.ScaleMax, &j.JudgeModel, &j.JudgeSim)
		return j, err
	})
	return out, mapErr(err, "item judgments")
}

// PairJudgings returns the pairwise judgings between two of the given
// runs (either order), newest first.
func (q *Queries) PairJudgings(ctx context.Context, runIDs []int64) ([]JudgeRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+judgeRunColumns+judgeRunFrom+`WHERE j.mode = 'pairwise'
		AND j.run_a = ANY(@runs) AND j.run_b = ANY(@runs) ORDER BY j.run_id DESC LIMIT 50`, pgx.NamedArgs{"runs": runIDs})
	out, err := pgx.CollectRows(rows, scanJudgeRun)
	return out, mapErr(err, "pair judgings")
}

// PairVerdicts returns a pairwise judging's reconciled verdicts on the
// given items, by item.
func (q *Queries) PairVerdicts(ctx context.Context, judgeRunID int64, idx []int32) (map[int]Judgment, error) {
	rows, _ := q.db.Query(ctx, `SELECT judge_run_id, judged_run_id, idx, ord, score, rating, verdict, rationale, raw
		FROM judgments WHERE judge_run_id = @run AND ord = 'final' AND idx = ANY(@idx)`, pgx.NamedArgs{"run": judgeRunID, "idx": idx})
	out := map[int]Judgment{}
	var j Judgment
	_, err := pgx.ForEachRow(rows, []any{&j.JudgeRunID, &j.JudgedRunID, &j.Idx, &j.Order, &j.Score, &j.Rating, &j.Verdict,
		&j.Rationale, &j.Raw}, func() error {
		out[j.Idx] = j
		return nil
	})
	return out, mapErr(err, "pair verdicts")
}

// ServedTarget is a hardware profile and runtime some live agent serves.
type ServedTarget struct {
	Hardware string
	Runtime  string
}

// ServedTargets lists the hardware profile × runtime pairs served now by
// an agent online, beating within staleAfter, not drained or deactivated.
func (q *Queries) ServedTargets(ctx context.Context, protocol int, staleAfter time.Duration) ([]ServedTarget, error) {
	rows, _ := q.db.Query(ctx, `SELECT DISTINCT a.hardware_profile, rt FROM agents a, unnest(a.runtimes) AS rt
		WHERE a.hardware_profile IS NOT NULL AND a.protocol_version = @protocol AND a.state = 'online' AND NOT a.drained
		AND a.deactivated_at IS NULL AND a.last_heartbeat_at > now() - @stale::interval ORDER BY 1, 2`,
		pgx.NamedArgs{"protocol": protocol, "stale": staleAfter})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ServedTarget, error) {
		var t ServedTarget
		err := row.Scan(&t.Hardware, &t.Runtime)
		return t, err
	})
	return out, mapErr(err, "served targets")
}
