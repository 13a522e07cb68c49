package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/jobs"
)

// RunFigures is a run in a comparison: where it ran, its stored summaries,
// its quality so far and its hardware's price.
type RunFigures struct {
	Run
	DatasetID  int64
	Summary    json.RawMessage
	GPUSummary json.RawMessage
	// NodeSummary is the node's CPU and memory over the run (JSON, as
	// agentd's node.Summary; nil when not measured).
	NodeSummary  json.RawMessage
	PricePerHour *float64
	// LoadTimeMs is how long a runtime agentd launched took to load the
	// model (nil when agentd did not launch it); RuntimeLog the end of
	// that runtime's log.
	LoadTimeMs *float64
	RuntimeLog string
	// GPUCount is the hardware profile's GPUs (0 on CPU).
	GPUCount int
	// Stat is the run's figures with their intervals and load identity
	// (nil until its score job kept them); Qualities its quality under
	// each scorer identity, oldest first, the last being Quality's.
	Stat      *RunStat
	Qualities []Quality
	// TokenPrice is the remote provider's price a "provider:model" run
	// was created under (nil for others, and for provider runs without a
	// price), and PromptTokens the run's input tokens: such a run is paid
	// by the token, not by its agent machine's hour.
	TokenPrice   *ProviderPrice
	PromptTokens int64
	// SLO is the run's benchmark's SLO (its manifest's "slo"; zero when
	// it set none): goodput counts the requests that met it.
	SLO jobs.SLO
	// VerdictScorerKey is the scorer identity the owner of the run's
	// benchmark chose for its verdict ("" when none was chosen): runs of
	// that one benchmark are ranked on quality under it everywhere.
	VerdictScorerKey string
}

// ScorerKey is the scorer identity of the run's latest quality ("" when
// unscored).
func (r RunFigures) ScorerKey() string {
	if len(r.Qualities) == 0 {
		return ""
	}
	return r.Qualities[len(r.Qualities)-1].ScorerKey
}

// QualityUnder is the run's quality under scorer identity key.
func (r RunFigures) QualityUnder(key string) (Quality, bool) {
	for _, x := range r.Qualities {
		if x.ScorerKey == key {
			return x, true
		}
	}
	return Quality{}, false
}

// withConclusions adds each run's kept figures and qualities.
func (q *Queries) withConclusions(ctx context.Context, runs []RunFigures) ([]RunFigures, error) {
	if len(runs) == 0 {
		return runs, nil
	}
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	st, err := q.RunStats(ctx, ids)
	if err != nil {
		return nil, err
	}
	qs, err := q.RunQualities(ctx, ids)
	if err != nil {
		return nil, err
	}
	prices, err := q.runTokenPrices(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, r := range runs {
		if s, ok := st[r.ID]; ok {
			runs[i].Stat = &s
		}
		runs[i].Qualities = qs[r.ID]
		if p, ok := prices[r.ID]; ok {
			runs[i].TokenPrice, runs[i].PromptTokens = &p.price, p.prompt
		}
	}
	return runs, nil
}

// tokenPrice is a provider run's price and input tokens.
type tokenPrice struct {
	price  ProviderPrice
	prompt int64
}

// runTokenPrices reads the provider prices of those of the runs made
// against a remote provider with a price.
func (q *Queries) runTokenPrices(ctx context.Context, ids []int64) (map[int64]tokenPrice, error) {
	rows, _ := q.db.Query(ctx, `SELECT pp.run_id, pp.provider, m.name, pp.input_per_1m::float8, pp.output_per_1m::float8, r.prompt_tokens
		FROM run_providers pp JOIN runs r ON r.id = pp.run_id JOIN models m ON m.id = r.model_id
		WHERE pp.run_id = ANY(@ids) AND pp.input_per_1m IS NOT NULL AND pp.output_per_1m IS NOT NULL`, pgx.NamedArgs{"ids": ids})
	out := map[int64]tokenPrice{}
	var id int64
	var t tokenPrice
	_, err := pgx.ForEachRow(rows, []any{&id, &t.price.Provider, &t.price.Model, &t.price.InputPer1M, &t.price.OutputPer1M, &t.prompt}, func() error {
		out[id] = t
		return nil
	})
	return out, mapErr(err, "run token prices")
}

// runFiguresColumns and runFiguresFrom read a RunFigures.
const runFiguresColumns = runColumns + `, b.dataset_id, r.summary, r.gpu_summary, h.price_per_hour::float8, r.load_time_ms, r.runtime_log, h.gpu_count,
	r.node_summary, coalesce(b.manifest -> 'slo', '{}'::jsonb), coalesce(b.verdict_scorer_key, '')`

const runFiguresFrom = ` FROM runs r JOIN models m ON m.id = r.model_id JOIN benchmarks b ON b.id = r.benchmark_id
	LEFT JOIN agents a ON a.id = r.agent_id JOIN hardware_profiles h ON h.slug = r.hardware_profile `

func scanRunFigures(row pgx.CollectableRow) (RunFigures, error) {
	var r RunFigures
	err := row.Scan(r.compareFields()...)
	return r, err
}

// compareFields are the scan targets of runFiguresColumns.
func (r *RunFigures) compareFields() []any {
	return append(r.fields(), &r.DatasetID, &r.Summary, &r.GPUSummary, &r.PricePerHour, &r.LoadTimeMs, &r.RuntimeLog, &r.GPUCount,
		&r.NodeSummary, &r.SLO, &r.VerdictScorerKey)
}

// DatasetRuns returns the finished runs on a dataset that the viewer may
// read, newest first, at most limit of them: every target benchmarked on
// it, across benchmarks (judges' runs left out); with imported, also the
// results imported from elsewhere, which have a quality and no speed.
func (q *Queries) DatasetRuns(ctx context.Context, v Viewer, datasetID int64, limit int, imported bool) ([]RunFigures, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+runFiguresColumns+runFiguresFrom+`
		WHERE b.dataset_id = @ds AND r.state = 'completed' AND (r.summary IS NOT NULL OR @imported AND r.mode = 'imported')
			AND b.judges_run_id IS NULL AND`+benchmarkReadable+`
		ORDER BY r.id DESC LIMIT @limit`,
		pgx.NamedArgs{"ds": datasetID, "viewer": v.UserID, "admin": v.Admin, "limit": limit, "imported": imported})
	out, err := pgx.CollectRows(rows, scanRunFigures)
	if err != nil {
		return nil, mapErr(err, "dataset runs")
	}
	return q.withConclusions(ctx, out)
}

// RunFiguresByID returns the figures of the runs ids the viewer may read,
// in the order asked.
func (q *Queries) RunFiguresByID(ctx context.Context, v Viewer, ids []int64) ([]RunFigures, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+runFiguresColumns+runFiguresFrom+`
		WHERE r.id = ANY(@ids) AND`+benchmarkReadable+`ORDER BY array_position(@ids, r.id)`,
		pgx.NamedArgs{"ids": ids, "viewer": v.UserID, "admin": v.Admin})
	out, err := pgx.CollectRows(rows, scanRunFigures)
	if err != nil {
		return nil, mapErr(err, "compare runs")
	}
	return q.withConclusions(ctx, out)
}

// CompareCell is one run's answer to one item.
type CompareCell struct {
	Run    int64    `json:"run"`
	Status string   `json:"status"`
	Output string   `json:"output"`
	Score  *float64 `json:"score"`
	Error  string   `json:"error"`
}

// CompareItem is one dataset item with every compared run's answer (in
// the runs' order; a run without a result for it has none).
type CompareItem struct {
	Idx      int
	CustomID string
	Prompt   string
	Cells    []CompareCell
}

// CompareItems pages through a dataset's items after idx after, with the
// given runs' answers side by side. disagree keeps the items where the
// runs differ: by score where they are scored, else by output (trimmed,
// case-insensitive) or status.
func (q *Queries) CompareItems(ctx context.Context, datasetID int64, runIDs []int64, after, limit int, disagree bool) ([]CompareItem, error) {
	filter := ""
	if disagree {
		filter = ` AND (SELECT count(DISTINCT coalesce(x.score::text, x.status || ':' || lower(btrim(x.output))))
			FROM results x WHERE x.run_id = ANY(@runs) AND x.idx = i.idx) > 1`
	}
	rows, _ := q.db.Query(ctx, `SELECT i.idx, i.custom_id,
			left(coalesce(i.request->'body'->'messages'->-1->>'content', i.request->'body'->>'prompt', ''), 300),
			coalesce((SELECT json_agg(json_build_object('run', x.run_id, 'status', x.status, 'output', left(x.output, 2000),
				'score', x.score, 'error', x.error) ORDER BY array_position(@runs, x.run_id))
				FROM results x WHERE x.run_id = ANY(@runs) AND x.idx = i.idx), '[]')
		FROM dataset_items i
		WHERE i.dataset_id = @ds AND i.idx > @after
			AND EXISTS (SELECT 1 FROM results x WHERE x.run_id = ANY(@runs) AND x.idx = i.idx)`+filter+`
		ORDER BY i.idx LIMIT @limit`,
		pgx.NamedArgs{"ds": datasetID, "runs": runIDs, "after": after, "limit": max(min(limit, 200), 1)})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (CompareItem, error) {
		var it CompareItem
		var cells []byte
		if err := row.Scan(&it.Idx, &it.CustomID, &it.Prompt, &cells); err != nil {
			return it, err
		}
		return it, json.Unmarshal(cells, &it.Cells)
	})
	return out, mapErr(err, "compare items")
}

// driftRuns is how many of a deployment's newest completed runs
// DeploymentRuns reads: recent enough to be the deployment as it is.
const driftRuns = 1000

// DeploymentRun is one of a deployment's runs as its between-run spread
// is measured from: its target (model and load identity), its kept output
// tokens/s and p95 E2E latency, its requests and those within its
// benchmark's SLO (the SLO as its canonical JSON, "" when none was set),
// and its load profile.
type DeploymentRun struct {
	Target         string
	TPS, P95       float64
	Good, Requests int
	SLO, Profile   string
}

// DeploymentRuns is a deployment's (hardware profile × runtime × engine
// settings: two configurations of one runtime drift apart, so they are
// two deployments) newest
// completed runs with figures, each with its target (model and load
// identity), its output tokens/s and p95 E2E latency, and its requests and
// those within its benchmark's SLO (the SLO as its canonical JSON, "" when
// the benchmark set none): what its between-run spread is measured from
// (conclude.WithDrift; docs/concepts.md#drift). Profile is the run's load
// profile, by which the engine keeps goodput to open loops.
// Only runs that had ended by the newest end among the runs asOf count
// (all when asOf is empty or none of them has ended): a conclusion about
// finished runs stays what it was when they finished, whatever the
// deployment runs later, and a restored backup draws it alike
// (docs/concepts.md#drift).
func (q *Queries) DeploymentRuns(ctx context.Context, hardware, runtime string, engine jobs.Engine, asOf []int64) ([]DeploymentRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT r.model_id::text || ' ' || s.load_key, s.tps, s.e2e_p95,
			coalesce((r.summary->>'good_requests')::int, 0), coalesce((r.summary->>'requests')::int, 0),
			coalesce(b.manifest -> 'slo', '{}'::jsonb), coalesce(s.load_identity->>'profile', '')
		FROM run_stats s JOIN runs r ON r.id = s.run_id AND r.attempt = s.attempt JOIN benchmarks b ON b.id = r.benchmark_id
		WHERE r.hardware_profile = @hw AND r.runtime = @rt AND r.engine = @engine AND r.state = 'completed' AND s.tps > 0 AND s.e2e_p95 > 0
			AND r.finished_at <= coalesce((SELECT max(x.finished_at) FROM runs x WHERE x.id = ANY(@asof)), 'infinity')
		ORDER BY r.id DESC LIMIT @limit`, pgx.NamedArgs{"hw": hardware, "rt": runtime, "engine": engineJSON(engine), "asof": asOf, "limit": driftRuns})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DeploymentRun, error) {
		var r DeploymentRun
		var slo jobs.SLO
		err := row.Scan(&r.Target, &r.TPS, &r.P95, &r.Good, &r.Requests, &slo, &r.Profile)
		if err == nil && slo.Set() {
			key, _ := json.Marshal(slo)
			r.SLO = string(key)
		}
		return r, err
	})
	return out, mapErr(err, "deployment runs")
}
