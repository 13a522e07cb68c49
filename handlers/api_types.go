package handlers

import (
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// The API's answers that the OpenAPI description (openapi.yaml) names,
// typed so that the JSON follows the description's schema.

// apiError is #/components/schemas/Error: a failure, said for a person.
type apiError struct {
	Error string `json:"error"`
}

// apiPathErrors is #/components/schemas/PathErrors: field errors, each
// naming its field by its path in the body.
type apiPathErrors struct {
	Errors valid.Errors `json:"errors"`
}

// apiChanged is #/components/responses/Changed: how many runs changed.
type apiChanged struct {
	Changed int `json:"changed"`
}

// apiModelSaved is #/components/responses/ModelSaved.
type apiModelSaved struct {
	ModelID int64  `json:"model_id"`
	Name    string `json:"name"`
}

// apiModelRetired is #/components/responses/ModelRetired.
type apiModelRetired struct {
	ModelID int64 `json:"model_id"`
	Retired bool  `json:"retired"`
}

// apiAgentChanged is #/components/responses/AgentChanged.
type apiAgentChanged struct {
	AgentID int64  `json:"agent_id"`
	Action  string `json:"action"`
}

// apiUsers is GET /users.
type apiUsers struct {
	Users []apiUser `json:"users"`
}

// apiModel is #/components/schemas/Model.
type apiModel struct {
	ModelID         int64   `json:"model_id"`
	Name            string  `json:"name"`
	DisplayName     string  `json:"display_name"`
	Family          string  `json:"family"`
	ParamsB         float64 `json:"params_b"`
	Quantization    string  `json:"quantization"`
	ContextLength   int     `json:"context_length"`
	License         string  `json:"license"`
	MemoryGB        float64 `json:"memory_gb"`
	MemoryEstimated bool    `json:"memory_estimated"`
	// BaseModelID is the base model of a fine-tune or adapter, named as
	// it is written (ModelFields).
	BaseModelID *int64 `json:"base_model_id"`
	Adapter     bool   `json:"adapter"`
	Retired     bool   `json:"retired"`
}

// apiModels is GET /models.
type apiModels struct {
	Models []apiModel `json:"models"`
}

// apiAgent is #/components/schemas/Agent.
type apiAgent struct {
	AgentID         int64     `json:"agent_id"`
	Name            string    `json:"name"`
	Host            string    `json:"host"`
	Version         string    `json:"version"`
	ProtocolVersion int       `json:"protocol_version"`
	Hardware        string    `json:"hardware"`
	Runtimes        []string  `json:"runtimes"`
	State           string    `json:"state"`
	LastHeartbeatAt time.Time `json:"last_heartbeat_at"`
	CurrentRun      *int64    `json:"current_run"`
}

// apiAgents is GET /agents.
type apiAgents struct {
	Agents []apiAgent `json:"agents"`
}

// apiHardwareProfile is #/components/schemas/HardwareProfile.
type apiHardwareProfile struct {
	Slug           string   `json:"slug"`
	GPUName        string   `json:"gpu_name"`
	GPUCount       int      `json:"gpu_count"`
	GPUMemoryBytes int64    `json:"gpu_memory_bytes"`
	CPUCores       int      `json:"cpu_cores"`
	PricePerHour   *float64 `json:"price_per_hour"`
	Agents         int      `json:"agents"`
	OnlineAgents   int      `json:"online_agents"`
}

// apiHardware is GET /hardware.
type apiHardware struct {
	Hardware []apiHardwareProfile `json:"hardware"`
}

// apiHardwarePrice is what PUT /hardware/{slug}/price answers.
type apiHardwarePrice struct {
	Slug         string   `json:"slug"`
	PricePerHour *float64 `json:"price_per_hour"`
}

// apiCreatedBenchmark is #/components/schemas/CreatedBenchmark.
type apiCreatedBenchmark struct {
	BenchmarkID int64              `json:"benchmark_id"`
	Name        string             `json:"name"`
	Status      string             `json:"status"`
	StartedAt   *time.Time         `json:"started_at"`
	CreatedAt   time.Time          `json:"created_at"`
	RunIDs      []int64            `json:"run_ids"`
	Runs        []bench.PlannedRun `json:"runs"`
	DatasetID   int64              `json:"dataset_id"`
	DatasetName string             `json:"dataset_name"`
	Manifest    *bench.Manifest    `json:"manifest,omitempty"`
}

// apiBenchmarkChanged is what PATCH /benchmarks/{id} answers: the
// benchmark as changed.
type apiBenchmarkChanged struct {
	BenchmarkID   int64  `json:"benchmark_id"`
	Name          string `json:"name"`
	Visibility    string `json:"visibility"`
	VerdictScorer string `json:"verdict_scorer"`
}

// apiRunSteps is what GET /runs/{id}/steps answers.
type apiRunSteps struct {
	RunID      int64              `json:"run_id"`
	State      string             `json:"state"`
	Steps      []jobs.StepSummary `json:"steps"`
	Saturation *jobs.Saturation   `json:"saturation"`
	// LengthLimits, for a length sweep, is where the runtime began to
	// queue and to preempt.
	LengthLimits *jobs.LengthLimits `json:"length_limits,omitempty"`
}

// apiDatasets is GET /datasets.
type apiDatasets struct {
	Datasets []apiDataset `json:"datasets"`
}

// apiDuplicateDataset is what an upload answers when an identical dataset
// exists (409).
type apiDuplicateDataset struct {
	Error    string       `json:"error"`
	Existing []apiDataset `json:"existing"`
}

// apiLineErrors is #/components/schemas/LineErrors: a file's first errors,
// each naming its line, with their count.
type apiLineErrors struct {
	Errors     []dataset.LineError `json:"errors"`
	ErrorCount int                 `json:"error_count"`
}

// apiBenchmarkList is GET /benchmarks: a page of benchmarks and the
// cursor of the next (null on the last).
type apiBenchmarkList struct {
	Benchmarks []apiBenchmarkStatus `json:"benchmarks"`
	Next       *string              `json:"next"`
}

// apiBenchmark is GET /benchmarks/{id}: the benchmark, its progress as
// the list gives it, and every run with its figures.
type apiBenchmark struct {
	BenchmarkID int64     `json:"benchmark_id"`
	Name        string    `json:"name"`
	DatasetID   int64     `json:"dataset_id"`
	Dataset     string    `json:"dataset"`
	CreatedAt   time.Time `json:"created_at"`
	Visibility  string    `json:"visibility"`
	Owner       string    `json:"owner"`
	Writable    bool      `json:"writable"`
	apiBenchmarkProgress
	Completed  int64      `json:"completed"`
	Total      int64      `json:"total"`
	Errors     int64      `json:"errors"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Runs       []apiRun   `json:"runs"`
	// Search is the budgeted search's record (docs/benchmarks.md#budgeted-search);
	// absent for a benchmark without one, and in lists.
	Search *bench.SearchRecord `json:"search,omitempty"`
}
