package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/riverqueue/river"
)

// Load profiles (docs/benchmarks.md#load-profiles).
const (
	LoadSequential  = "sequential"
	LoadConcurrency = "concurrency"
	LoadConstant    = "constant-rate"
	LoadPoisson     = "poisson"
	LoadSweep       = "sweep"
	// LoadTrace sends each item at its own arrival time: a synthetic
	// trace dataset's, divided by Speed.
	LoadTrace = "trace"
	// LoadLengthSweep sends generated prompts of each listed input (and
	// output) length in turn, at one concurrency or rate
	// (docs/benchmarks.md#length-sweeps).
	LoadLengthSweep = "length-sweep"
)

// Duration is a time.Duration that reads and writes as "30s" in JSON and
// YAML manifests.
type Duration time.Duration

// MarshalText writes the duration as Go's duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads "30s", "5m", "1h30m"; what it cannot read is an
// *Error.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		q := strconv.Quote(string(b))
		return codeError(q+" is not a duration (use a number with a unit, such as 500ms, 30s or 5m)", "valid.duration", "Value", q)
	}
	*d = Duration(v)
	return nil
}

// LoadProfile is how requests are sent. Its validate tags are each
// field's own rules (app/valid); what a field must be for a given profile
// is the manifest's to check (app/bench).
type LoadProfile struct {
	Profile string `json:"profile" yaml:"profile" validate:"oneof=sequential concurrency constant-rate poisson sweep trace length-sweep"`
	// Concurrency is the number of requests in flight (concurrency; the
	// ceiling of a sweep).
	Concurrency int `json:"concurrency,omitempty" yaml:"concurrency,omitempty"`
	// Rate is requests per second (constant-rate, poisson).
	Rate float64 `json:"rate,omitempty" yaml:"rate,omitempty" validate:"finite"`
	// Steps is how many rates a sweep tries between sequential and the
	// highest throughput.
	Steps int `json:"steps,omitempty" yaml:"steps,omitempty"`
	// Rates, for a sweep, are the user's own steps instead: constant
	// rates in requests/s, in order (Concurrency caps what is in flight).
	Rates []float64 `json:"rates,omitempty" yaml:"rates,omitempty" validate:"dive,finite"`
	// Concurrencies, for a sweep, are the user's own closed-loop steps
	// instead: so many requests in flight each, in order.
	Concurrencies []int `json:"concurrencies,omitempty" yaml:"concurrencies,omitempty"`
	// Lengths, for a length sweep, are the prompt and answer lengths it
	// steps through.
	Lengths *Lengths `json:"lengths,omitempty" yaml:"lengths,omitempty"`
	// Speed, for the trace profile, replays the trace that many times
	// faster (0.5: half as fast); zero means 1.
	Speed float64 `json:"speed,omitempty" yaml:"speed,omitempty" validate:"finite"`
	// Warmup requests are sent first and excluded from every figure.
	Warmup int `json:"warmup,omitempty" yaml:"warmup,omitempty" validate:"min=0" msg:"valid.negative"`
	// Limits; zero means none.
	MaxRequests int      `json:"max_requests,omitempty" yaml:"max_requests,omitempty" validate:"min=0" msg:"valid.negative_all_items"`
	MaxDuration Duration `json:"max_duration,omitempty" yaml:"max_duration,omitempty" validate:"min=0" msg:"valid.negative_no_limit"`
	MaxErrors   int      `json:"max_errors,omitempty" yaml:"max_errors,omitempty" validate:"min=0" msg:"valid.negative_no_limit"`
}

// Sampling is passed to the runtime with every request.
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature,omitempty" validate:"omitnil,finite,min=0,max=2" msg_min:"valid.temperature" msg_max:"valid.temperature"`
	TopP        *float64 `json:"top_p,omitempty" yaml:"top_p,omitempty" validate:"omitnil,finite,gt=0,max=1" msg_gt:"valid.top_p" msg_max:"valid.top_p"`
	MaxTokens   int      `json:"max_tokens" yaml:"max_tokens" validate:"min=1,max=1000000" msg:"valid.max_tokens"`
	Seed        *int64   `json:"seed,omitempty" yaml:"seed,omitempty"`
	Stop        []string `json:"stop,omitempty" yaml:"stop,omitempty" validate:"max=4,dive,required,max=1000,text" msg_required:"valid.not_empty"`
	// N is how many answers to ask for each item (one request each; 0
	// means 1): the samples pass@k is estimated from. Its max is
	// MaxSamples.
	N int `json:"n,omitempty" yaml:"n,omitempty" validate:"min=0,max=100" msg:"valid.answers_per_item"`
}

// MaxSamples bounds Sampling.N.
const MaxSamples = 100

// Samples is N, at least 1.
func (s Sampling) Samples() int { return max(s.N, 1) }

// SLO is the service level a request must meet to count towards goodput;
// zero means no bound.
type SLO struct {
	TTFT Duration `json:"ttft,omitempty" yaml:"ttft,omitempty" validate:"min=0" msg:"valid.negative"`
	TPOT Duration `json:"tpot,omitempty" yaml:"tpot,omitempty" validate:"min=0" msg:"valid.negative"`
	E2E  Duration `json:"e2e,omitempty" yaml:"e2e,omitempty" validate:"min=0" msg:"valid.negative"`
	// Goodput is the share of a step's requests that must meet every SLO
	// for the SLOs to hold at that load (a sweep's saturation point);
	// zero means DefaultGoodput.
	Goodput float64 `json:"goodput,omitempty" yaml:"goodput,omitempty" validate:"finite,min=0,max=1" msg:"valid.goodput"`
}

// DefaultGoodput is the share of requests meeting the SLOs at which a load
// still counts as served: 99 %.
const DefaultGoodput = 0.99

// Set says whether any SLO bounds a request: without one every
// successful request counts as good, and goodput is no conclusion.
func (s SLO) Set() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2E > 0 }

// GoodputShare is s.Goodput, or DefaultGoodput when unset.
func (s SLO) GoodputShare() float64 {
	if s.Goodput > 0 {
		return s.Goodput
	}
	return DefaultGoodput
}

// RunArgs is the River job of one run: a target (model × runtime ×
// hardware profile) on a dataset. The agent reads the dataset's items from
// PostgreSQL itself; everything else it needs is here.
type RunArgs struct {
	ProtocolVersion int    `json:"protocol_version"`
	RunID           int64  `json:"run_id"`
	BenchmarkID     int64  `json:"benchmark_id"`
	DatasetID       int64  `json:"dataset_id"`
	Model           string `json:"model"`
	// AdapterOf is the base model Model is a LoRA adapter of (the
	// registry's base model of an adapter); empty for a full model. An
	// agent that launches the runtime loads the base and the adapter on
	// it, or refuses the run where the runtime takes no adapter.
	AdapterOf       string      `json:"adapter_of,omitempty"`
	Runtime         string      `json:"runtime"`
	HardwareProfile string      `json:"hardware_profile"`
	Load            LoadProfile `json:"load"`
	Sampling        Sampling    `json:"sampling"`
	SLO             SLO         `json:"slo"`
	// Engine is the target's engine settings, checked against the table
	// (EngineParams); the agent checks them again and launches the
	// runtime with them (docs/benchmarks.md#engine-settings).
	Engine Engine `json:"engine,omitempty"`
}

// Kind is the job kind, stable across versions.
func (RunArgs) Kind() string { return "benchmark_run" }

// MaxRunTime is the longest a run may be worked; a run without a
// max_duration is stopped there. River's rescuer is tuned past it.
const MaxRunTime = 24 * time.Hour

// InsertOpts puts the run on the queue of its hardware profile and
// runtime, so only agents that can serve it lease it.
func (a RunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue(a.HardwareProfile, a.Runtime), MaxAttempts: 5}
}

// CheckProtocol refuses a job written for another protocol version, with a
// message each side can act on.
func CheckProtocol(jobVersion int) error {
	if jobVersion != ProtocolVersion {
		return fmt.Errorf("this job was written for protocol %d but this agent speaks protocol %d: run an agentd and server of the same release", jobVersion, ProtocolVersion)
	}
	return nil
}

// ServerRunWorker registers the run kind with the server's River client,
// which must know every kind (its rescuer discards jobs of unknown kinds)
// but never listens to the run queues: agents work runs.
type ServerRunWorker struct {
	river.WorkerDefaults[RunArgs]
}

// Work is reached only if the server were configured with a run queue.
func (ServerRunWorker) Work(context.Context, *river.Job[RunArgs]) error {
	return river.JobCancel(errors.New("benchmark runs are worked by agentd, not by the server"))
}
