package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/export"
	"github.com/ruckus/ruckus/app/store"

	"github.com/ruckus/ruckus/app/i18n"
)

// The Benchmark Runner's shapes of the v1 API: the benchmarks list with
// each benchmark's status and figures aggregated over its runs, and a
// benchmark's results as one JSON document, paged.

type benchmarkRunnerStore interface {
	ListBenchmarkStatuses(ctx context.Context, v store.Viewer, p store.BenchmarkPage) ([]store.BenchmarkStatusRow, error)
	BenchmarkStatusByID(ctx context.Context, v store.Viewer, id int64, staleAfter time.Duration) (store.BenchmarkStatusRow, error)
	ResultsAfter(ctx context.Context, runIDs []int64, after store.ResultKey, limit int) ([]store.ResultRow, error)
}

// Page sizes of the lists: default and most.
const (
	apiPageDefault = 100
	apiPageMax     = 1000
)

// apiBenchmarkStatus is a benchmark in the Benchmark Runner's shape, with
// Ruckus's own fields beside it.
type apiBenchmarkStatus struct {
	BenchmarkID int64  `json:"benchmark_id"`
	Name        string `json:"name"`
	// Visibility is private (owner and administrators) or shared (every
	// user may read it).
	Visibility string `json:"visibility"`
	apiBenchmarkProgress
	Completed int64 `json:"completed"`
	Total     int64 `json:"total"`
	Errors    int64 `json:"errors"`
	// Throughput is output tokens/s: while the benchmark runs, the sum
	// over its running runs; once it has finished, its best completed
	// run's (as the benchmarks page shows it).
	Throughput   float64 `json:"throughput"`
	OutputTokens int64   `json:"output_tokens"`
	// ModelID and ModelName are the first run's model (its registry id,
	// and its display name or else its name); Model its registry name.
	ModelID   *int64 `json:"model_id"`
	Model     string `json:"model"`
	ModelName string `json:"model_name"`
	// Models is every run's model, in run order, with the run's target,
	// state and figures.
	Models      []store.BenchmarkStatusRun `json:"models"`
	DatasetID   int64                      `json:"dataset_id"`
	DatasetName string                     `json:"dataset_name"`
	// Dataset is DatasetName, under the name this list used before.
	Dataset string `json:"dataset"`
	// Runs is how many runs the benchmark has.
	Runs      int        `json:"runs"`
	StartedAt *time.Time `json:"started_at"`
	// FinishedAt is when the last run finished; TotalTimeSeconds the
	// time from the first run's start to then. Both null until the
	// benchmark has finished (and the time null when no run started).
	FinishedAt       *time.Time `json:"finished_at"`
	TotalTimeSeconds *float64   `json:"total_time_seconds"`
	CreatedAt        time.Time  `json:"created_at"`
}

// apiBenchmarkProgress is a benchmark's status, progress and ETA, the
// same in the list and for one benchmark (store.EstimateBenchmark).
type apiBenchmarkProgress struct {
	// Status is aggregated over the runs (store.BenchmarkStatus).
	Status string `json:"status"`
	// Progress is the percentage of requests done over all runs, rounded
	// down (100 only when every request is done).
	Progress int `json:"progress"`
	// ETASeconds is the time until the last run should finish, rounded
	// up; 0 once finished; null when it cannot be estimated, and then
	// ETAReason says why (null when there is an estimate).
	ETASeconds *int64  `json:"eta_seconds"`
	ETAReason  *string `json:"eta_reason"`
}

func toAPIBenchmarkProgress(e store.BenchmarkEstimate) apiBenchmarkProgress {
	a := apiBenchmarkProgress{Status: e.Status, Progress: e.Progress, ETASeconds: e.ETASeconds}
	if e.ETASeconds == nil {
		reason := e.ETAReason
		a.ETAReason = &reason
	}
	return a
}

func toAPIBenchmarkStatus(b store.BenchmarkStatusRow) apiBenchmarkStatus {
	a := apiBenchmarkStatus{BenchmarkID: b.ID, Name: b.Name, Visibility: b.Visibility, apiBenchmarkProgress: toAPIBenchmarkProgress(b.Estimate),
		Completed: b.Completed, Total: b.Total,
		Errors: b.Errors, OutputTokens: b.OutputTokens, Models: b.Runs, DatasetID: b.DatasetID, DatasetName: b.DatasetName,
		Dataset: b.DatasetName, Runs: len(b.Runs), StartedAt: b.StartedAt, FinishedAt: b.FinishedAt, CreatedAt: b.CreatedAt}
	if a.Models == nil {
		a.Models = []store.BenchmarkStatusRun{}
	}
	active := a.Status == store.BenchmarkQueued || a.Status == store.BenchmarkRunning
	if active {
		a.Throughput = b.LiveThroughput
	} else {
		a.Throughput = b.BestThroughput
		if b.StartedAt != nil && b.FinishedAt != nil {
			t := b.FinishedAt.Sub(*b.StartedAt).Seconds()
			a.TotalTimeSeconds = &t
		}
	}
	if len(b.Runs) > 0 {
		first := b.Runs[0]
		a.ModelID, a.Model, a.ModelName = &first.ModelID, first.Model, first.DisplayName
		if a.ModelName == "" {
			a.ModelName = first.Model
		}
	}
	return a
}

// pageLimit reads ?limit= (default apiPageDefault, at most apiPageMax).
func pageLimit(c *fiber.Ctx) (int, error) {
	v := c.Query("limit")
	if v == "" {
		return apiPageDefault, nil
	}
	n, err := parseIdx("limit", v)
	if err != nil || n < 1 || n > apiPageMax {
		return 0, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("limit must be between 1 and %d (got %q)", apiPageMax, clipQuery(v)))
	}
	return n, nil
}

func clipQuery(v string) string {
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return strings.ToValidUTF8(v, "?")
}

// apiListBenchmarks lists the viewer's benchmarks (everyone's, for
// administrators), newest first, keyset-paged: ?after=<next>&limit=N.
func (s *server) apiListBenchmarks(c *fiber.Ctx) error {
	limit, err := pageLimit(c)
	if err != nil {
		return err
	}
	var after int64
	if v := c.Query("after"); v != "" {
		if after, err = parseID("after", v); err != nil {
			return fiber.NewError(fiber.StatusBadRequest, err.Error()+": use a cursor returned as next")
		}
	}
	// One more than asked says whether there is a next page.
	bs, err := s.Store.ListBenchmarkStatuses(c.UserContext(), viewer(c), store.BenchmarkPage{After: after, Limit: limit + 1, StaleAfter: s.AgentStaleAfter})
	if err != nil {
		return err
	}
	var next *string
	if len(bs) > limit {
		bs = bs[:limit]
		next = new(strconv.FormatInt(bs[limit-1].ID, 10))
	}
	out := make([]apiBenchmarkStatus, len(bs))
	for i, b := range bs {
		out[i] = toAPIBenchmarkStatus(b)
	}
	return c.JSON(apiBenchmarkList{Benchmarks: out, Next: next})
}

// resultCursor is a results page's cursor, "<run_id>-<idx>-<sample>":
// the last result of the page before.
func formatBenchmarkResultCursor(k store.ResultKey) string {
	return fmt.Sprintf("%d-%d-%d", k.RunID, k.Idx, k.Sample)
}

// parseBenchmarkResultCursor reads a cursor formatBenchmarkResultCursor wrote, each part
// within its column's bounds (run id bigint from 1, item index integer
// from 0, sample 0 to 99).
func parseBenchmarkResultCursor(raw string) (store.ResultKey, error) {
	bad := badParam("after", raw, i18n.M("param.runner_cursor"))
	parts := strings.Split(raw, "-")
	if len(parts) != 3 {
		return store.ResultKey{}, bad
	}
	run, err := parseID("after", parts[0])
	if err != nil {
		return store.ResultKey{}, bad
	}
	idx, err := parseIdx("after", parts[1])
	if err != nil {
		return store.ResultKey{}, bad
	}
	sample, ok := parseUint(parts[2])
	if !ok || sample > 99 {
		return store.ResultKey{}, bad
	}
	return store.ResultKey{RunID: run, Idx: idx, Sample: int(sample)}, nil
}

// apiResultEntry is one answer in a benchmark's results document: the
// item, the run and model that answered, and the response in the OpenAI
// batch output shape.
type apiResultEntry struct {
	CustomID string `json:"custom_id"`
	RunID    int64  `json:"run_id"`
	Model    string `json:"model"`
	Idx      int    `json:"idx"`
	Sample   int    `json:"sample"`
	Status   string `json:"status"`
	// Response is always present: a failed request's status_code is the
	// runtime's HTTP status, null when no HTTP answer came (the runtime
	// unreachable, a timeout, a broken stream), and its body an OpenAI
	// error object.
	Response apiResultResponse  `json:"response"`
	Error    *export.BatchError `json:"error"`
	Ruckus   json.RawMessage    `json:"ruckus"`
}

type apiResultResponse struct {
	StatusCode *int   `json:"status_code"`
	RequestID  string `json:"request_id"`
	Body       any    `json:"body"`
}

// apiBenchmarkResults is a benchmark's results as one JSON document:
// the benchmark's name, model, dataset, status, total time and
// throughput, then its answers in (run, item, sample) order,
// keyset-paged: ?after=<next>&limit=N.
func (s *server) apiBenchmarkResults(c *fiber.Ctx) error {
	id, err := idParam(c, "id", "benchmark")
	if err != nil {
		return err
	}
	limit, err := pageLimit(c)
	if err != nil {
		return err
	}
	var after store.ResultKey
	if v := c.Query("after"); v != "" {
		if after, err = parseBenchmarkResultCursor(v); err != nil {
			return fiber.NewError(fiber.StatusBadRequest, err.Error())
		}
	}
	b, err := s.Store.BenchmarkStatusByID(c.UserContext(), viewer(c), id, s.AgentStaleAfter)
	if err != nil {
		return lookup("benchmark", err)
	}
	ids := make([]int64, len(b.Runs))
	models := make(map[int64]string, len(b.Runs))
	for i, r := range b.Runs {
		ids[i], models[r.RunID] = r.RunID, r.Model
	}
	rows, err := s.Store.ResultsAfter(c.UserContext(), ids, after, limit+1)
	if err != nil {
		return err
	}
	var next *string
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		next = new(formatBenchmarkResultCursor(store.ResultKey{RunID: last.RunID, Idx: last.Idx, Sample: last.Sample}))
	}
	results := make([]apiResultEntry, len(rows))
	for i, r := range rows {
		line := export.Line(models[r.RunID], nil, r)
		e := apiResultEntry{CustomID: r.CustomID, RunID: r.RunID, Model: models[r.RunID], Idx: r.Idx, Sample: r.Sample,
			Status: r.Status, Error: line.Error, Ruckus: line.Ruckus}
		if line.Response != nil {
			code := line.Response.StatusCode
			e.Response = apiResultResponse{StatusCode: &code, RequestID: line.Response.RequestID, Body: line.Response.Body}
		} else {
			e.Response = apiResultResponse{RequestID: r.RequestID, Body: export.ErrorBody(r)}
		}
		results[i] = e
	}
	a := toAPIBenchmarkStatus(b)
	return c.JSON(apiBenchmarkResults{BenchmarkID: a.BenchmarkID, Name: a.Name, ModelID: a.ModelID, Model: a.Model,
		ModelName: a.ModelName, Models: a.Models, DatasetID: a.DatasetID, DatasetName: a.DatasetName,
		Status: a.Status, TotalTimeSeconds: a.TotalTimeSeconds, Throughput: a.Throughput, Completed: a.Completed,
		Total: a.Total, Results: results, Next: next})
}

// apiBenchmarkResults is GET /benchmarks/{id}/results: the benchmark as
// the list gives it, a page of its results and the cursor of the next
// (null on the last).
type apiBenchmarkResults struct {
	BenchmarkID      int64                      `json:"benchmark_id"`
	Name             string                     `json:"name"`
	ModelID          *int64                     `json:"model_id"`
	Model            string                     `json:"model"`
	ModelName        string                     `json:"model_name"`
	Models           []store.BenchmarkStatusRun `json:"models"`
	DatasetID        int64                      `json:"dataset_id"`
	DatasetName      string                     `json:"dataset_name"`
	Status           string                     `json:"status"`
	TotalTimeSeconds *float64                   `json:"total_time_seconds"`
	Throughput       float64                    `json:"throughput"`
	Completed        int64                      `json:"completed"`
	Total            int64                      `json:"total"`
	Results          []apiResultEntry           `json:"results"`
	Next             *string                    `json:"next"`
}
