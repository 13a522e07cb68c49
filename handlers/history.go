package handlers

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/views/history"
	"github.com/ruckus/ruckus/views/recommend"

	"github.com/ruckus/ruckus/app/i18n"
)

// historyStore is what the leaderboard, the history and the benchmark
// controls need.
type historyStore interface {
	Leaderboard(ctx context.Context, v store.Viewer, q store.LeaderboardQuery) ([]store.LeaderboardRow, error)
	LeaderboardFacets(ctx context.Context, v store.Viewer, datasetID int64) (store.LeaderboardFacets, error)
	LeaderboardLengths(ctx context.Context, v store.Viewer, q store.LeaderboardQuery) ([]store.RunLengths, error)
	UpdateBenchmark(ctx context.Context, v store.Viewer, id int64, ch store.BenchmarkChange) error
	DeleteBenchmark(ctx context.Context, v store.Viewer, id int64) error
	RunQualities(ctx context.Context, runIDs []int64) (map[int64][]store.Quality, error)
}

// fieldError is one invalid input: its path (the query parameter or the
// body's field) and what is wrong, in words.
type fieldError = valid.FieldError

// leaderboardParams are a leaderboard's or a history's query parameters
// as given.
type leaderboardParams struct {
	Model    string `form:"model" validate:"max=200,text"`
	Runtime  string `form:"runtime" validate:"max=64,text"`
	Hardware string `form:"hardware" validate:"max=64,text"`
	Scorer   string `form:"scorer" validate:"max=4000,text"`
	Load     string `form:"load" validate:"max=4000,text"`
	From     string `form:"from" validate:"omitempty,datetime=2006-01-02" msg_datetime:"history_form.date"`
	To       string `form:"to" validate:"omitempty,datetime=2006-01-02" msg_datetime:"history_form.date"`
	Sort     string `form:"sort" validate:"omitempty,oneof=quality speed latency cost date"`
	Metric   string `form:"metric" validate:"omitempty,oneof=quality throughput latency cost"`
	Limit    string `form:"limit" validate:"max=3"`
	After    string `form:"after" validate:"max=100,text"`
}

// defaultLeaderboardRows is a leaderboard page's rows unless limit says.
const defaultLeaderboardRows = 100

// parseLeaderboard reads and checks the query parameters get returns;
// the query's DatasetID is left to the caller. Every problem is named by
// its parameter.
func parseLeaderboard(v *valid.Validator, get func(string) string) (leaderboardParams, store.LeaderboardQuery, []fieldError) {
	p := leaderboardParams{Model: strings.TrimSpace(get("model")), Runtime: strings.TrimSpace(get("runtime")),
		Hardware: strings.TrimSpace(get("hardware")), Scorer: get("scorer"), Load: get("load"), From: strings.TrimSpace(get("from")), To: strings.TrimSpace(get("to")),
		Sort: get("sort"), Metric: get("metric"), Limit: strings.TrimSpace(get("limit")), After: get("after")}
	q := store.LeaderboardQuery{Model: p.Model, Runtime: p.Runtime, Hardware: p.Hardware, Scorer: p.Scorer, Load: p.Load, Sort: p.Sort, Limit: defaultLeaderboardRows}
	if q.Sort == "" {
		q.Sort = store.SortQuality
	}
	errs := []fieldError(v.Struct(p))
	bad := map[string]bool{}
	for _, e := range errs {
		bad[e.Path] = true
	}
	day := func(name, raw string) *time.Time {
		if raw == "" || bad[name] {
			return nil
		}
		t, err := time.Parse("2006-01-02", raw)
		if err != nil || t.Year() < 1970 || t.Year() > 9999 {
			errs = append(errs, valid.E(name, "form_err.date_range"))
			return nil
		}
		return &t
	}
	q.From = day("from", p.From)
	if to := day("to", p.To); to != nil {
		end := to.AddDate(0, 0, 1) // the whole day
		q.To = &end
	}
	if q.From != nil && q.To != nil && !q.From.Before(*q.To) {
		errs = append(errs, valid.E("to", "form_err.to_before_from"))
	}
	if p.Limit != "" && !bad["limit"] {
		n, err := strconv.Atoi(p.Limit)
		if err != nil || n < 1 || n > store.MaxLeaderboardRows {
			errs = append(errs, valid.E("limit", "form_err.limit", "Max", store.MaxLeaderboardRows))
		} else {
			q.Limit = n
		}
	}
	if p.After != "" && !bad["after"] {
		cur, err := parseLeaderboardCursor(p.After)
		if err != nil {
			errs = append(errs, valid.E("after", "form_err.leaderboard_cursor"))
		} else {
			q.After = cur
		}
	}
	return p, q, errs
}

// parseLeaderboardCursor reads a cursor made by formatLeaderboardCursor:
// "M~KEY~RUN", M 0 or 1 (the row had no figure), KEY a finite number, RUN
// a run id.
func parseLeaderboardCursor(raw string) (*store.LeaderboardCursor, error) {
	parts := strings.Split(raw, "~")
	if len(parts) != 3 || (parts[0] != "0" && parts[0] != "1") {
		return nil, badParam("after", raw, i18n.M("param.cursor"))
	}
	key, err := parseFinite("after", parts[1])
	if err != nil || len(parts[1]) > 40 {
		return nil, badParam("after", raw, i18n.M("param.cursor"))
	}
	id, err := parseID("after", parts[2])
	if err != nil {
		return nil, err
	}
	return &store.LeaderboardCursor{Missing: parts[0] == "1", Key: key, RunID: id}, nil
}

func formatLeaderboardCursor(c store.LeaderboardCursor) string {
	m := "0"
	if c.Missing {
		m = "1"
	}
	return m + "~" + strconv.FormatFloat(c.Key, 'g', -1, 64) + "~" + strconv.FormatInt(c.RunID, 10)
}

// leaderboard reads a dataset's leaderboard page as the query asks.
func (s *server) leaderboard(c *fiber.Ctx) (history.LeaderboardData, []fieldError, error) {
	d, err := s.datasetParam(c)
	if err != nil {
		return history.LeaderboardData{}, nil, err
	}
	p, q, errs := parseLeaderboard(s.validate, func(k string) string { return c.Query(k) })
	data := history.LeaderboardData{Dataset: d, Form: history.Form(p), Sort: q.Sort}
	for _, e := range errs {
		data.Errors = append(data.Errors, e.Path+": "+e.Text(c.UserContext()))
	}
	if data.Facets, err = s.Store.LeaderboardFacets(c.UserContext(), viewer(c), d.ID); err != nil {
		return data, errs, err
	}
	if len(errs) > 0 {
		return data, errs, nil
	}
	// Each sort ranks within the identity the engine names
	// (conclude.LeaderboardWithin): one scorer identity for quality, one
	// load identity for speed, latency and cost.
	q.Scorer, q.Load = conclude.LeaderboardWithin(q.Sort, q, data.Facets)
	q.Sort, data.SortReason = conclude.LeaderboardSort(q.Sort, q.Scorer, q.Load)
	data.Form.Scorer, data.Form.Load, data.Sort = q.Scorer, q.Load, q.Sort
	q.DatasetID = d.ID
	// Speed, latency and cost rank only runs whose lengths the engine
	// compares; the others are listed with why (conclude.LeaderboardLengths).
	if conclude.LeaderboardRanksByLoad(q.Sort) {
		lengths, err := s.Store.LeaderboardLengths(c.UserContext(), viewer(c), q)
		if err != nil {
			return data, nil, err
		}
		data.LeftOut = conclude.LeaderboardLengths(lengths)
		for _, l := range data.LeftOut {
			q.Without = append(q.Without, l.RunID)
		}
	}
	// One row more than the page says whether there is a next page.
	want := q.Limit
	q.Limit++
	rows, err := s.Store.Leaderboard(c.UserContext(), viewer(c), q)
	if err != nil {
		return data, nil, err
	}
	if len(rows) > want {
		rows = rows[:want]
		data.NextCursor = formatLeaderboardCursor(rows[want-1].Cursor)
		next := url.Values{}
		for k, v := range map[string]string{"model": p.Model, "runtime": p.Runtime, "hardware": p.Hardware, "scorer": q.Scorer, "load": q.Load, "from": p.From,
			"to": p.To, "sort": q.Sort, "limit": p.Limit, "after": data.NextCursor} {
			if v != "" {
				next.Set(k, v)
			}
		}
		data.NextURL = fmt.Sprintf("/datasets/%d/leaderboard?%s", d.ID, next.Encode())
	}
	data.Rows = rows
	return data, nil, nil
}

func (s *server) showLeaderboardPage(c *fiber.Ctx) error {
	data, errs, err := s.leaderboard(c)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if len(errs) > 0 {
		status = fiber.StatusUnprocessableEntity
	}
	if c.Get("HX-Request") != "" && c.Get("HX-Target") == "leaderboard" {
		return render(c, status, history.LeaderboardTable(data))
	}
	return render(c, status, history.LeaderboardPage(data))
}

// apiLeaderboardRow is a leaderboard row in the API.
type apiLeaderboardRow struct {
	RunID         int64              `json:"run_id"`
	BenchmarkID   int64              `json:"benchmark_id"`
	BenchmarkName string             `json:"benchmark"`
	Model         string             `json:"model"`
	Runtime       string             `json:"runtime"`
	Hardware      string             `json:"hardware"`
	FinishedAt    time.Time          `json:"finished_at"`
	Scorer        string             `json:"scorer"`
	Load          string             `json:"load"`
	Quality       *float64           `json:"quality"`
	QualityLo     *float64           `json:"quality_lo"`
	QualityHi     *float64           `json:"quality_hi"`
	TokensPerS    *float64           `json:"output_tokens_per_s"`
	RequestsPerS  *float64           `json:"requests_per_s"`
	TTFTp50       *float64           `json:"ttft_p50_ms"`
	TTFTp95       *float64           `json:"ttft_p95_ms"`
	E2Ep50        *float64           `json:"e2e_p50_ms"`
	E2Ep95        *float64           `json:"e2e_p95_ms"`
	CostPer1M     *float64           `json:"cost_per_1m_tokens"`
	Regression    *store.Regression  `json:"regression"`
	Regressions   []store.Regression `json:"regressions"`
}

func toAPILeaderboard(rows []store.LeaderboardRow) []apiLeaderboardRow {
	out := make([]apiLeaderboardRow, len(rows))
	for i, r := range rows {
		out[i] = apiLeaderboardRow{RunID: r.RunID, BenchmarkID: r.BenchmarkID, BenchmarkName: r.BenchmarkName, Model: r.Model,
			Runtime: r.Runtime, Hardware: r.Hardware, FinishedAt: r.FinishedAt, Scorer: r.Scorer, Load: r.Load, Quality: r.Quality,
			QualityLo: r.QualityLo, QualityHi: r.QualityHi, TokensPerS: r.TokensPerS, RequestsPerS: r.RequestsPerS,
			TTFTp50: r.TTFTp50, TTFTp95: r.TTFTp95, E2Ep50: r.E2Ep50, E2Ep95: r.E2Ep95, CostPer1M: r.CostPer1M,
			Regressions: r.Regressions, Regression: store.FirstRegression(r.Regressions)}
		if out[i].Regressions == nil {
			out[i].Regressions = []store.Regression{}
		}
	}
	return out
}

func (s *server) apiLeaderboard(c *fiber.Ctx) error {
	data, errs, err := s.leaderboard(c)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: errs})
	}
	var next *string
	if data.NextCursor != "" {
		next = &data.NextCursor
	}
	leftOut := data.LeftOut
	if leftOut == nil {
		leftOut = []conclude.LeaderboardLeftOut{}
	}
	var why string
	if data.SortReason.Code != "" {
		why = conclude.English(data.SortReason)
	}
	return c.JSON(apiLeaderboard{DatasetID: data.Dataset.ID, Sort: data.Sort, SortReason: why, Rows: toAPILeaderboard(data.Rows), LeftOut: leftOut, Next: next})
}

// apiLeaderboard is GET /datasets/{id}/leaderboard: a page of rows and
// the cursor of the next (null on the last).
type apiLeaderboard struct {
	DatasetID int64  `json:"dataset_id"`
	Sort      string `json:"sort"`
	// SortReason says why the list is by date where another sort was
	// asked (conclude.LeaderboardSort); absent otherwise.
	SortReason string              `json:"sort_reason,omitempty"`
	Rows       []apiLeaderboardRow `json:"rows"`
	// LeftOut are the runs a sort by speed, latency or cost does not rank
	// with the rows, with why (their lengths; docs/history.md#leaderboard-of-a-dataset).
	LeftOut []conclude.LeaderboardLeftOut `json:"left_out"`
	Next    *string                       `json:"next"`
}

// apiHistory is GET /datasets/{id}/history: one model's runs on the
// dataset as points of one metric.
type apiHistory struct {
	DatasetID int64             `json:"dataset_id"`
	Model     string            `json:"model"`
	Metric    history.Metric    `json:"metric"`
	Points    []apiHistoryPoint `json:"points"`
}

// apiHistoryPoint is one run of a history: its metric's value (null when
// not measured) and the first regression it showed.
type apiHistoryPoint struct {
	RunID      int64     `json:"run_id"`
	FinishedAt time.Time `json:"finished_at"`
	Runtime    string    `json:"runtime"`
	Hardware   string    `json:"hardware"`
	Engine     string    `json:"engine,omitempty"`
	// Load is the run's load identity key ("" when not kept); Line the
	// line of the chart the point is on (conclude.HistorySeries): one per
	// target, and for throughput, latency and cost per load identity.
	Load       string            `json:"load"`
	Line       int               `json:"line"`
	Value      *float64          `json:"value"`
	Regression *store.Regression `json:"regression"`
}

// history reads the history of one model on a dataset: every run of it
// the viewer may read, oldest first, and the chart of the metric asked.
func (s *server) history(c *fiber.Ctx, api bool) (history.HistoryData, []fieldError, error) {
	d, err := s.datasetParam(c)
	if err != nil {
		return history.HistoryData{}, nil, err
	}
	p, q, errs := parseLeaderboard(s.validate, func(k string) string { return c.Query(k) })
	if p.Model == "" && api {
		errs = append(errs, valid.E("model", "form_err.choose_model"))
	}
	if p.Sort != "" || p.After != "" {
		errs = append(errs, valid.E("sort", "form_err.history_order"))
	}
	data := history.HistoryData{Dataset: d, Form: history.Form(p), Metric: history.Metric(p.Metric)}
	if data.Metric == "" {
		data.Metric = history.MetricQuality
	}
	if data.Facets, err = s.Store.LeaderboardFacets(c.UserContext(), viewer(c), d.ID); err != nil {
		return data, errs, err
	}
	for _, e := range errs {
		data.Errors = append(data.Errors, e.Path+": "+e.Text(c.UserContext()))
	}
	if len(errs) > 0 || p.Model == "" {
		// Without a model the page offers the choice.
		return data, errs, nil
	}
	q.DatasetID, q.Sort = d.ID, store.SortOldest
	// A history of quality is drawn under one scorer identity: the one
	// asked, else the one the leaderboard ranks by
	// (docs/history.md#which-scorer).
	if data.Metric == history.MetricQuality && q.Scorer == "" {
		q.Scorer, _ = conclude.LeaderboardWithin(store.SortQuality, q, data.Facets)
		data.Form.Scorer = q.Scorer
	}
	if p.Limit == "" {
		q.Limit = store.MaxLeaderboardRows
	}
	if data.Rows, err = s.Store.Leaderboard(c.UserContext(), viewer(c), q); err != nil {
		return data, nil, err
	}
	data.Chart = history.Chart(c.UserContext(), data.Rows, data.Metric)
	return data, nil, nil
}

func (s *server) showHistoryPage(c *fiber.Ctx) error {
	data, errs, err := s.history(c, false)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if len(errs) > 0 {
		status = fiber.StatusUnprocessableEntity
	}
	return render(c, status, history.HistoryPage(data))
}

func (s *server) apiHistory(c *fiber.Ctx) error {
	data, errs, err := s.history(c, true)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: errs})
	}
	line := map[int64]int{}
	for i, l := range conclude.HistorySeries(data.Rows, data.Metric.Criterion()) {
		for _, r := range l.Rows {
			line[r.RunID] = i
		}
	}
	points := make([]apiHistoryPoint, 0, len(data.Rows))
	for _, r := range data.Rows {
		points = append(points, apiHistoryPoint{RunID: r.RunID, FinishedAt: r.FinishedAt, Runtime: r.Runtime, Hardware: r.Hardware, Engine: r.Engine,
			Load: r.Load, Line: line[r.RunID], Value: history.Value(r, data.Metric), Regression: store.FirstRegression(r.Regressions)})
	}
	return c.JSON(apiHistory{DatasetID: data.Dataset.ID, Model: data.Form.Model, Metric: data.Metric, Points: points})
}

// datasetRecommendation ranks every target benchmarked on the dataset
// (the completed runs the viewer may read) with the benchmark
// recommendation's advisor and tests, over the candidates and scorer
// identity the engine chooses (conclude.DatasetCandidates): each target
// under each load from the newest benchmark that measured it, its repeats
// there merged; the runs left out are listed with why.
func (s *server) datasetRecommendation(c *fiber.Ctx) (recommend.Data, error) {
	d, err := s.datasetParam(c)
	if err != nil {
		return recommend.Data{}, err
	}
	// Imported results rank on quality beside the runs measured here.
	runs, err := s.Store.DatasetRuns(c.UserContext(), viewer(c), d.ID, conclude.DatasetRunsRead, true)
	if err != nil {
		return recommend.Data{}, err
	}
	set := conclude.DatasetCandidates(runs)
	rd, _, err := s.recommendOver(c, set.Runs, set.ScorerKey, true, true)
	if err != nil {
		return recommend.Data{}, err
	}
	set.Tell(&rd.Rec)
	rd.Dataset = &d
	return rd, nil
}

func (s *server) showDatasetRecommendationPage(c *fiber.Ctx) error {
	d, err := s.datasetRecommendation(c)
	if err != nil {
		return err
	}
	return renderRecommendation(c, d)
}

func (s *server) apiDatasetRecommendation(c *fiber.Ctx) error {
	d, err := s.datasetRecommendation(c)
	if err != nil {
		return err
	}
	return answerRecommendation(c, d)
}
