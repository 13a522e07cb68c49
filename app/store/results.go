package store

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ResultRow is one stored result as the viewer and exports read it.
type ResultRow struct {
	RunID            int64
	Idx              int
	CustomID         string
	Status           string
	Output           string
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	TokensEstimated  bool
	SentAt           time.Time
	TTFTms           *float64
	E2Ems            *float64
	TPOTms           *float64
	ITLMeanms        *float64
	HTTPStatus       *int
	RequestID        string
	ErrorClass       string
	Error            string
	Phase            string
	Score            *float64
	// Endpoint is the item's API path (/v1/chat/completions or
	// /v1/completions), which decides the shape of a JSONL export.
	Endpoint string
	// Sample tells apart the answers to one item (0 for the first);
	// ExecStatus, ExecStderr and ExecMs are what the sandbox made of it
	// ('' when not executed).
	Sample     int
	ExecStatus string
	ExecStderr string
	ExecMs     *float64
	// JudgeVerdict and JudgeRationale are the newest LLM judge's
	// single-answer verdict on the item ("" when none judged it).
	JudgeVerdict   string
	JudgeRationale string
}

const resultColumns = `r.run_id, r.idx, r.custom_id, r.status, r.output, r.finish_reason, r.prompt_tokens, r.completion_tokens,
	r.tokens_estimated, r.sent_at, r.ttft_ms, r.e2e_ms, r.tpot_ms, r.itl_mean_ms, r.http_status, r.request_id, r.error_class,
	r.error, r.phase, r.score, coalesce(i.request->>'url', ''), r.sample, r.exec_status, r.exec_stderr, r.exec_ms,
	coalesce(jd.verdict, ''), coalesce(jd.rationale, '')`

const resultFrom = ` FROM results r JOIN runs ru ON ru.id = r.run_id JOIN benchmarks b ON b.id = ru.benchmark_id
	LEFT JOIN dataset_items i ON i.dataset_id = b.dataset_id AND i.idx = r.idx ` + judgmentJoin

// judgmentJoin adds the newest single-answer judgment of each result (jd).
const judgmentJoin = ` LEFT JOIN LATERAL (SELECT g.verdict, g.rationale FROM judgments g
		WHERE g.judged_run_id = r.run_id AND g.idx = r.idx AND g.ord = 'single' ORDER BY g.judge_run_id DESC LIMIT 1) jd ON true `

// fields are the scan targets of resultColumns, in order; queries that
// read more columns append theirs.
func (r *ResultRow) fields() []any {
	return []any{&r.RunID, &r.Idx, &r.CustomID, &r.Status, &r.Output, &r.FinishReason, &r.PromptTokens, &r.CompletionTokens,
		&r.TokensEstimated, &r.SentAt, &r.TTFTms, &r.E2Ems, &r.TPOTms, &r.ITLMeanms, &r.HTTPStatus, &r.RequestID, &r.ErrorClass,
		&r.Error, &r.Phase, &r.Score, &r.Endpoint, &r.Sample, &r.ExecStatus, &r.ExecStderr, &r.ExecMs, &r.JudgeVerdict, &r.JudgeRationale}
}

func scanResult(row pgx.CollectableRow) (ResultRow, error) {
	var r ResultRow
	err := row.Scan(r.fields()...)
	return r, err
}

// StreamResults calls fn for every result of the given runs, in run and
// item order, reading them row by row (constant memory whatever the size).
func (q *Queries) StreamResults(ctx context.Context, runIDs []int64, fn func(ResultRow) error) error {
	rows, err := q.db.Query(ctx, `SELECT `+resultColumns+resultFrom+`WHERE r.run_id = ANY(@runs) ORDER BY r.run_id, r.idx, r.sample`,
		pgx.NamedArgs{"runs": runIDs})
	if err != nil {
		return mapErr(err, "stream results")
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanResult(rows)
		if err != nil {
			return mapErr(err, "stream results")
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return mapErr(rows.Err(), "stream results")
}

// ResultFilter narrows and orders a run's results for the viewer.
type ResultFilter struct {
	CustomID string // exact custom_id
	Text     string // case-insensitive substring of the output or error
	Status   string // ok, error or empty for both
	MinScore *float64
	MaxScore *float64
	// Sort is idx (default), ttft, e2e or score; Desc reverses it. Results
	// without the sort value come last.
	Sort string
	Desc bool
	// After is the keyset cursor of the last row of the previous page.
	After *ResultCursor
	Limit int
}

// ResultCursor is where a page ends: the sort value and the item (and
// its sample).
type ResultCursor struct {
	Key    float64
	Idx    int
	Sample int
}

// ResultListRow is a result with its prompt's excerpt.
type ResultListRow struct {
	ResultRow
	Prompt string
	Cursor ResultCursor
}

var sortColumns = map[string]string{"idx": "r.idx::float8", "ttft": "r.ttft_ms", "e2e": "r.e2e_ms", "score": "r.score"}

// ListResults returns one page of a run's results, keyset-paged (no
// OFFSET: every page costs the same however deep).
func (q *Queries) ListResults(ctx context.Context, runID int64, f ResultFilter) ([]ResultListRow, error) {
	col, ok := sortColumns[f.Sort]
	if !ok {
		col = sortColumns["idx"]
	}
	sentinel, cmp, dir := "'Infinity'::float8", ">", "ASC"
	if f.Desc {
		sentinel, cmp, dir = "'-Infinity'::float8", "<", "DESC"
	}
	key := "coalesce(" + col + ", " + sentinel + ")"
	args := pgx.NamedArgs{"run": runID, "limit": max(min(f.Limit, 500), 1)}
	where := "r.run_id = @run"
	if f.CustomID != "" {
		where += " AND r.custom_id = @custom_id"
		args["custom_id"] = f.CustomID
	}
	if f.Text != "" {
		where += " AND (strpos(lower(r.output), lower(@text)) > 0 OR strpos(lower(r.error), lower(@text)) > 0)"
		args["text"] = f.Text
	}
	if f.Status != "" {
		where += " AND r.status = @status"
		args["status"] = f.Status
	}
	if f.MinScore != nil {
		where += " AND r.score >= @min_score"
		args["min_score"] = *f.MinScore
	}
	if f.MaxScore != nil {
		where += " AND r.score <= @max_score"
		args["max_score"] = *f.MaxScore
	}
	order := key + " " + dir + ", r.idx " + dir + ", r.sample " + dir
	if col == sortColumns["idx"] {
		// Item order walks the primary key (run_id, idx, sample) directly.
		key, order = "r.idx::float8", "r.idx "+dir+", r.sample "+dir
		if f.After != nil {
			where += " AND (r.idx, r.sample) " + cmp + " (@after_idx, @after_sample)"
			args["after_idx"], args["after_sample"] = f.After.Idx, f.After.Sample
		}
	} else if f.After != nil {
		where += " AND (" + key + ", r.idx, r.sample) " + cmp + " (@after_key::float8, @after_idx, @after_sample)"
		args["after_key"], args["after_idx"], args["after_sample"] = f.After.Key, f.After.Idx, f.After.Sample
	}
	rows, _ := q.db.Query(ctx, `SELECT `+resultColumns+`,
			left(coalesce(i.request->'body'->'messages'->-1->>'content', i.request->'body'->>'prompt', ''), 200), `+key+`
		`+resultFrom+`WHERE `+where+` ORDER BY `+order+` LIMIT @limit`, args)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ResultListRow, error) {
		var r ResultListRow
		err := row.Scan(append(r.fields(), &r.Prompt, &r.Cursor.Key)...)
		r.Cursor.Idx, r.Cursor.Sample = r.Idx, r.Sample
		return r, err
	})
	return out, mapErr(err, "list results")
}

// ResultItem is one result with the full request and reference.
type ResultItem struct {
	ResultRow
	Request   json.RawMessage
	Reference json.RawMessage
	// The request's own inter-token latencies: percentiles over its
	// tokens (ms, nil when not measured) and the gaps as stored (one per
	// content event after the first, µs; ITLTokens nil when every event
	// carried one token).
	ITLP50ms, ITLP99ms, ITLMaxms *float64
	ITLGapsMicros, ITLTokens     []int32
}

// ResultByIdx returns one result of a run with its dataset item (the
// first sample's).
func (q *Queries) ResultByIdx(ctx context.Context, runID int64, idx int) (ResultItem, error) {
	return q.ResultBySample(ctx, runID, idx, 0)
}

// ResultBySample returns one answer of a run to an item, with the item.
func (q *Queries) ResultBySample(ctx context.Context, runID int64, idx, sample int) (ResultItem, error) {
	var it ResultItem
	// The request the run sent: its few-shot prompt when it has one.
	rows, _ := q.db.Query(ctx, `SELECT `+resultColumns+`,
			coalesce((SELECT p.request FROM run_prompts p WHERE p.run_id = r.run_id AND p.idx = r.idx), i.request, 'null'), coalesce(i.reference, 'null'),
			r.itl_p50_ms, r.itl_p99_ms, r.itl_max_ms, r.itl_gaps_us, r.itl_tokens`+resultFrom+
		`WHERE r.run_id = @run AND r.idx = @idx AND r.sample = @sample`, pgx.NamedArgs{"run": runID, "idx": idx, "sample": sample})
	it, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (ResultItem, error) {
		var r ResultItem
		err := row.Scan(append(r.fields(), &r.Request, &r.Reference, &r.ITLP50ms, &r.ITLP99ms, &r.ITLMaxms, &r.ITLGapsMicros, &r.ITLTokens)...)
		return r, err
	})
	return it, mapErr(err, "result by idx")
}

// SampleRow is one point of a run's charts.
type SampleRow struct {
	Seconds     float64 // since the run's first sample
	Completed   int
	Throughput  float64
	GPUUtil     *float64
	GPUMemBytes *int64
	GPUPowerW   *float64
	Running     *float64
	Waiting     *float64
	KVCache     *float64
	// Preemptions is the runtime's count of preempted requests so far.
	Preemptions *float64
	// GPUSimulated: the GPU readings were simulated from the load.
	GPUSimulated bool
	NodeReading
}

// RunSamples returns a run's samples in time order, thinned to at most
// limit points.
func (q *Queries) RunSamples(ctx context.Context, runID int64, limit int) ([]SampleRow, error) {
	rows, _ := q.db.Query(ctx, `SELECT extract(epoch FROM t - first)::float8, completed, throughput, gpu_util, gpu_mem_bytes, gpu_power_w,
			running, waiting, kv_cache, gpu_simulated, cpu_util, mem_used_bytes, mem_total_bytes, proc_cpu_util, proc_rss_bytes, preemptions
		FROM (SELECT s.*, min(t) OVER () AS first, row_number() OVER (ORDER BY t) AS rn, count(*) OVER () AS n
			FROM run_samples s WHERE run_id = @run) x
		WHERE (rn - 1) % greatest(1, ceil(n::float8 / @limit)::int) = 0 ORDER BY t`, pgx.NamedArgs{"run": runID, "limit": max(limit, 1)})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SampleRow, error) {
		var s SampleRow
		err := row.Scan(&s.Seconds, &s.Completed, &s.Throughput, &s.GPUUtil, &s.GPUMemBytes, &s.GPUPowerW, &s.Running, &s.Waiting, &s.KVCache,
			&s.GPUSimulated, &s.CPUUtil, &s.MemUsedBytes, &s.MemTotalBytes, &s.ProcCPUUtil, &s.ProcRSSBytes, &s.Preemptions)
		return s, err
	})
	return out, mapErr(err, "run samples")
}

// LatencyPoint is one successful request: when it was sent (seconds since
// the run's first request) and its latencies.
type LatencyPoint struct {
	Seconds  float64
	CustomID string
	TTFTms   float64
	E2Ems    float64
}

// LatencyPoints returns a run's successful requests in send order, thinned
// to at most about limit points by taking every n-th item (a walk of the
// primary key, not a sort of the whole run).
func (q *Queries) LatencyPoints(ctx context.Context, runID int64, limit int) ([]LatencyPoint, error) {
	rows, _ := q.db.Query(ctx, `WITH step AS (SELECT greatest(1, ceil(greatest(total, completed)::float8 / @limit))::int AS n FROM runs WHERE id = @run)
		SELECT extract(epoch FROM sent_at - min(sent_at) OVER ())::float8, custom_id, coalesce(ttft_ms, 0), coalesce(e2e_ms, 0)
		FROM results, step WHERE run_id = @run AND status = 'ok' AND idx % step.n = 0 ORDER BY sent_at, idx`,
		pgx.NamedArgs{"run": runID, "limit": max(limit, 1)})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LatencyPoint, error) {
		var p LatencyPoint
		err := row.Scan(&p.Seconds, &p.CustomID, &p.TTFTms, &p.E2Ems)
		return p, err
	})
	return out, mapErr(err, "latency points")
}

// ResultsCSVQuery is the SELECT that CopyResultsCSV hands to COPY: the
// runs' results in run and item order, the columns of
// export.ResultColumns (after export.RunColumns with runColumns). Unless
// raw, text a spreadsheet would read as a formula is neutralised as
// OWASP recommends against CSV injection: a value that begins with =, +,
// -, @, a tab or a carriage return gets a leading single quote (the twin
// of export.FormulaSafe, for CSV written by PostgreSQL).
func ResultsCSVQuery(runIDs []int64, runColumns, raw bool) string {
	return ResultsCSVQueryExec(runIDs, runColumns, raw, false)
}

// ResultsCSVQueryExec is ResultsCSVQuery, with exec adding the columns of
// export.ExecColumns (the answer's sample and what the sandbox made of
// it) for runs whose code was executed.
func ResultsCSVQueryExec(runIDs []int64, runColumns, raw, exec bool) string {
	ids := make([]string, len(runIDs))
	for i, id := range runIDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	in := strings.Join(ids, ",")
	if in == "" {
		in = "NULL"
	}
	text := func(col, as string) string {
		if raw {
			return col + " AS " + as
		}
		return `CASE WHEN left(` + col + `, 1) IN ('=', '+', '-', '@', E'\t', E'\r') THEN '''' || ` + col + ` ELSE ` + col + ` END AS ` + as
	}
	cols := text("r.custom_id", "custom_id") + `, r.idx, r.status, ` + text("r.output", "output") + `, ` + text("r.finish_reason", "finish_reason") +
		`, r.prompt_tokens, r.completion_tokens,
		CASE WHEN r.tokens_estimated THEN 'true' ELSE 'false' END AS tokens_estimated,
		r.ttft_ms, r.e2e_ms, r.tpot_ms, r.itl_mean_ms, r.score, r.error_class, ` + text("r.error", "error") + `, r.phase, r.sent_at,
		jd.verdict AS judge_verdict, ` + text("jd.rationale", "judge_rationale")
	if exec {
		cols += `, r.sample, r.exec_status, ` + text("r.exec_stderr", "exec_stderr") + `, r.exec_ms`
	}
	from := ` FROM results r` + judgmentJoin + `WHERE r.run_id IN (` + in + `) ORDER BY r.run_id, r.idx, r.sample`
	if runColumns {
		// engine, last, is the run's settings as name=value pairs by
		// name, the text jobs.Engine.Key writes ("" for the runtime's
		// defaults): export.EngineColumn.
		cols = `r.run_id, ` + text("m.name", "model") + `, ru.runtime, ru.hardware_profile AS hardware, ru.mode, ` + cols +
			`, (SELECT coalesce(string_agg(e.key || '=' || e.value, ' ' ORDER BY e.key), '') FROM jsonb_each_text(ru.engine) e) AS engine`
		from = ` FROM results r JOIN runs ru ON ru.id = r.run_id JOIN models m ON m.id = ru.model_id` + judgmentJoin + `
			WHERE r.run_id IN (` + in + `) ORDER BY r.run_id, r.idx, r.sample`
	}
	return `SELECT ` + cols + from
}

// CopyResultsCSV writes the runs' results as CSV (with a header) straight
// from PostgreSQL's COPY, in run and item order: the database formats the
// rows and they stream through untouched. With runColumns each row starts
// with its run, model, runtime, hardware and mode, and ends with its
// engine settings (export.EngineColumn). Columns match
// export.ResultColumns (and export.RunColumns); raw leaves text that looks
// like a formula as it is (see ResultsCSVQuery).
func (s *Store) CopyResultsCSV(ctx context.Context, w io.Writer, runIDs []int64, runColumns, raw bool) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return mapErr(err, "copy results")
	}
	defer conn.Release()
	// Runs whose code was executed (or that have several samples) carry
	// the execution columns too.
	var exec bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ANY(@runs) AND (exec_state <> '' OR samples > 1))`,
		pgx.NamedArgs{"runs": runIDs}).Scan(&exec); err != nil {
		return mapErr(err, "copy results")
	}
	_, err = conn.Conn().PgConn().CopyTo(ctx, w, `COPY (`+ResultsCSVQueryExec(runIDs, runColumns, raw, exec)+`) TO STDOUT WITH (FORMAT csv, HEADER true)`)
	return mapErr(err, "copy results")
}

// ErrorClassCount is how many of a run's requests failed with one class.
type ErrorClassCount struct {
	Class string
	Count int
}

// RunErrorClasses counts a run's failed requests by error class, most
// frequent first, as they stand (live while the run goes on).
func (q *Queries) RunErrorClasses(ctx context.Context, runID int64) ([]ErrorClassCount, error) {
	rows, _ := q.db.Query(ctx, `SELECT coalesce(nullif(error_class, ''), 'other'), count(*)::int
		FROM results WHERE run_id = @run AND status = 'error' GROUP BY 1 ORDER BY 2 DESC, 1`, pgx.NamedArgs{"run": runID})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ErrorClassCount, error) {
		var e ErrorClassCount
		err := row.Scan(&e.Class, &e.Count)
		return e, err
	})
	return out, mapErr(err, "error classes")
}
