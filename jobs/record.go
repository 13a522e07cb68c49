package jobs

import (
	"sort"
	"time"
)

// Per-request outcome of one dataset item (docs/metrics.md#definitions).
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Error classes a failed request is counted under.
const (
	ErrConnect    = "connect"     // the runtime could not be reached
	ErrTimeout    = "timeout"     // no answer within the request timeout
	ErrHTTP4xx    = "http_4xx"    // the runtime refused the request (other than 429)
	ErrHTTP429    = "http_429"    // rate limited / overloaded
	ErrHTTP5xx    = "http_5xx"    // the runtime failed
	ErrDisconnect = "disconnect"  // the stream ended before it finished
	ErrMalformed  = "malformed"   // an event or body that is not the protocol
	ErrStall      = "stall"       // no event for longer than the stall timeout
	ErrCancelled  = "cancelled"   // the run was cancelled while the request was in flight
	ErrRuntime    = "runtime"     // the runtime reported an error event in the stream
	ErrInvalidReq = "invalid_req" // the dataset item could not be turned into a request
)

// Metric names, one meaning everywhere: UI, API and exports.
const (
	MetricTTFT       = "ttft_ms" // send → first event carrying generated content
	MetricE2E        = "e2e_ms"  // send → last content event (or the final response)
	MetricTPOT       = "tpot_ms" // (E2E − TTFT) / (output tokens − 1)
	MetricITL        = "itl_ms"  // gaps between content events, split among their tokens
	MetricOutputTPS  = "output_tokens_per_s"
	MetricRequestsPS = "requests_per_s"
	MetricGoodput    = "goodput_rps" // requests/s meeting every SLO
)

// Result is the record of one request: one dataset item sent once. Times
// are durations from the send, taken on Go's monotonic clock.
type Result struct {
	Idx int `json:"idx"`
	// Sample tells apart the answers to one item when a run asks for
	// several (0 for the first, and for a run of one answer per item).
	Sample   int    `json:"sample,omitempty"`
	CustomID string `json:"custom_id"`
	Status   string `json:"status"` // StatusOK or StatusError
	Output   string `json:"output"`
	// FinishReason as the runtime reported it ("stop", "length", …).
	FinishReason string `json:"finish_reason,omitempty"`
	// Tokens from the runtime's usage; TokensEstimated is set when the
	// runtime gave none and the completion tokens were counted client-side.
	PromptTokens     int  `json:"prompt_tokens"`
	CompletionTokens int  `json:"completion_tokens"`
	TokensEstimated  bool `json:"tokens_estimated,omitempty"`
	// StartOffset is when the request was sent, from the run's start.
	StartOffset time.Duration `json:"start_offset"`
	TTFT        time.Duration `json:"ttft"` // zero when no content arrived
	E2E         time.Duration `json:"e2e"`
	TPOT        time.Duration `json:"tpot"` // zero with fewer than two output tokens
	// ITL statistics over the request's inter-token latencies.
	ITLMean time.Duration `json:"itl_mean"`
	ITLP50  time.Duration `json:"itl_p50"`
	ITLP99  time.Duration `json:"itl_p99"`
	ITLMax  time.Duration `json:"itl_max"`
	// ITLGapsMicros is, for each content event after the first, the time
	// since the previous one in microseconds; ITLTokens is how many tokens
	// each of those events carried, nil when every one carried a single
	// token. A gap g over n tokens counts as n inter-token latencies of
	// g/n, so a run's ITL percentiles are over all of its tokens.
	ITLGapsMicros []int32 `json:"itl_gaps_us,omitempty"`
	ITLTokens     []int32 `json:"itl_tokens,omitempty"`
	// ContentEvents counts SSE events that carried generated content.
	ContentEvents int `json:"content_events"`
	HTTPStatus    int `json:"http_status,omitempty"`
	// RequestID is the runtime's response id, when it sent one.
	RequestID  string `json:"request_id,omitempty"`
	ErrorClass string `json:"error_class,omitempty"`
	Error      string `json:"error,omitempty"`
	// Phase names the step of a sweep ("sequential", "max", "rate 2.50/s");
	// empty for the other load profiles.
	Phase string `json:"phase,omitempty"`
}

// Dist summarises one metric over a run's requests: mean, extremes and
// percentiles by linear interpolation between closest ranks (numpy's
// default, PostgreSQL's percentile_cont).
type Dist struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
}

// RunSummary is a run's aggregate figures, computed from its stored
// results when it finishes, so a run worked by several agents in turn is
// summarised over all of them.
type RunSummary struct {
	Requests      int            `json:"requests"`
	OK            int            `json:"ok"`
	Errors        int            `json:"errors"`
	ErrorsByClass map[string]int `json:"errors_by_class"`
	PromptTokens  int64          `json:"prompt_tokens"`
	OutputTokens  int64          `json:"output_tokens"`
	// EstimatedTokens counts requests whose output tokens were counted
	// client-side because the runtime reported no usage.
	EstimatedTokens int `json:"estimated_tokens"`
	// MeasuredSeconds is the measured window (warm-up excluded), summed
	// over the agents that worked the run.
	MeasuredSeconds  float64 `json:"measured_seconds"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	RequestsPerS     float64 `json:"requests_per_s"`
	// GoodRequests met every SLO the benchmark set; GoodputRPS is their
	// rate. Without SLOs every successful request counts.
	GoodRequests int     `json:"good_requests"`
	GoodputRPS   float64 `json:"goodput_rps"`
	TTFT         Dist    `json:"ttft_ms"`
	TPOT         Dist    `json:"tpot_ms"`
	E2E          Dist    `json:"e2e_ms"`
	// ITL is the distribution of every inter-token latency of every
	// successful request (vLLM bench's definition): a gap shared by several
	// tokens counts once per token. ITLTokens is how many latencies that
	// is; zero when none was measured (imported results, one-token
	// answers), and then ITL is not a measurement.
	ITL       Dist `json:"itl_ms"`
	ITLTokens int  `json:"itl_tokens"`
	// OutputLength is the distribution of output tokens per successful
	// request (the answers' lengths); nil when no request succeeded, and
	// in summaries written before it was kept.
	OutputLength *Dist `json:"output_tokens_per_request,omitempty"`
	// Steps are a sweep's steps, each summarised on its own, in the order
	// they ran; Saturation is where the SLOs stop holding. Both empty for
	// the other load profiles.
	Steps      []StepSummary `json:"steps,omitempty"`
	Saturation *Saturation   `json:"saturation,omitempty"`
	// LengthLimits, for a length sweep, is where the runtime began to
	// queue and preempt, read with the runtime's states when the run is
	// shown.
	LengthLimits *LengthLimits `json:"length_limits,omitempty"`
	// SweepLimits, for a rate or concurrency sweep, is where the runtime
	// began to queue and preempt, read likewise.
	SweepLimits *SweepLimits `json:"sweep_limits,omitempty"`
}

// CostPer1M is USD per million output tokens at pricePerHour: the price
// over the tokens an hour of this run's measured throughput makes. False
// when the run made no tokens (no figure, never 0).
func (s RunSummary) CostPer1M(pricePerHour float64) (float64, bool) {
	if s.OutputTokensPerS <= 0 {
		return 0, false
	}
	return pricePerHour / (s.OutputTokensPerS * 3600) * 1e6, true
}

// StepSummary is one step of a sweep: the load offered, what was achieved,
// and the latencies and goodput at it
// (docs/metrics.md#sweeps-offered-vs-achieved-rate-and-the-saturation-point).
type StepSummary struct {
	// Name is the step as the load generator labels it: "sequential",
	// "max", "rate 2.50/s".
	Name string `json:"name"`
	// OfferedRPS is the rate a constant-rate step aimed at; nil for the
	// closed-loop steps (sequential, max), which offer what they achieve.
	OfferedRPS    *float64       `json:"offered_rps"`
	Requests      int            `json:"requests"`
	OK            int            `json:"ok"`
	Errors        int            `json:"errors"`
	ErrorsByClass map[string]int `json:"errors_by_class"`
	OutputTokens  int64          `json:"output_tokens"`
	// WindowSeconds runs from the step's first send to its last
	// completion; the achieved rates are over it.
	WindowSeconds    float64 `json:"window_seconds"`
	AchievedRPS      float64 `json:"achieved_rps"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	// TokensPerSPerUser is the decode speed one user sees: 1000 / TPOT p50.
	TokensPerSPerUser float64 `json:"tokens_per_s_per_user"`
	GoodRequests      int     `json:"good_requests"`
	GoodputRPS        float64 `json:"goodput_rps"`
	TTFT              Dist    `json:"ttft_ms"`
	TPOT              Dist    `json:"tpot_ms"`
	ITL               Dist    `json:"itl_ms"`
	ITLTokens         int     `json:"itl_tokens"`
	E2E               Dist    `json:"e2e_ms"`
	// SLOsHold: at least the SLO's goodput share of the step's requests
	// met every SLO.
	SLOsHold bool `json:"slos_hold"`

	// A length sweep's step (docs/metrics.md#length-sweeps); empty for the
	// other steps. InputTarget and OutputTarget are the lengths asked
	// (output 0: the sampling's max_tokens); PromptTokens the prompt
	// lengths the runtime reported (usage's prompt_tokens) for the
	// successful requests, and PromptTokensOff the most any was off the
	// target; PrefillTokensPerS each request's prompt tokens ÷ its TTFT,
	// their median with its interval; Runtime what the runtime's /metrics
	// said during the step, read when the run is shown.
	InputTarget       int             `json:"input_tokens_target,omitempty"`
	OutputTarget      int             `json:"output_tokens_target,omitempty"`
	PromptTokens      *Dist           `json:"prompt_tokens,omitempty"`
	PromptTokensOff   *float64        `json:"prompt_tokens_off,omitempty"`
	PrefillTokensPerS *MedianInterval `json:"prefill_tokens_per_s,omitempty"`
	Runtime           *RuntimeState   `json:"runtime,omitempty"`
}

// Saturation is the highest measured load at which the SLOs hold: between
// HoldsAtRPS (the achieved rate of the busiest step where they hold) and
// FailsAtRPS (the least busy step above it where they do not). HoldsAtRPS
// is nil when they hold at no step; FailsAtRPS is nil when they hold at
// every step (the saturation point is beyond what was measured).
type Saturation struct {
	GoodputShare float64  `json:"goodput_share"`
	HoldsAtRPS   *float64 `json:"holds_at_rps"`
	HoldsStep    string   `json:"holds_step,omitempty"`
	FailsAtRPS   *float64 `json:"fails_at_rps"`
	FailsStep    string   `json:"fails_step,omitempty"`
}

// FindSaturation places the saturation point among a sweep's steps: the
// SLOs hold at a step when at least share of its requests met every SLO.
// Steps are taken in order of achieved rate; the point is reported as the
// interval between the busiest step where they hold and the next busier
// one where they do not. Nil without steps, and for a length sweep.
func FindSaturation(steps []StepSummary, share float64) *Saturation {
	// A length sweep's steps differ in length, not in load: no rate is
	// where its SLOs stop holding (its limits are LengthLimits).
	if len(steps) == 0 || IsLengthSweep(steps) {
		return nil
	}
	order := make([]int, len(steps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return steps[order[a]].AchievedRPS < steps[order[b]].AchievedRPS })
	sat := &Saturation{GoodputShare: share}
	for _, i := range order {
		st := steps[i]
		rps := st.AchievedRPS
		if st.SLOsHold {
			sat.HoldsAtRPS, sat.HoldsStep = &rps, st.Name
			sat.FailsAtRPS, sat.FailsStep = nil, ""
		} else if sat.FailsAtRPS == nil {
			sat.FailsAtRPS, sat.FailsStep = &rps, st.Name
		}
	}
	return sat
}
