package sim

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
)

// Config is the simulated runtime's behaviour. Every setting has a flag
// (RegisterFlags) and a YAML key: the flag's name without "sim-", with
// "_" for "-" (--sim-output-tokens is output_tokens). Start from
// DefaultConfig; NewServer gives the zero value of any field
// DefaultConfig's value.
type Config struct {
	// TTFT is the time from the request to the first token; ITL the time
	// between tokens. Both are durations.
	TTFT Dist `yaml:"ttft"`
	ITL  Dist `yaml:"itl"`
	// OutputTokens is the answer's length in tokens (at least 1, at most
	// MaxOutputTokens), capped by the request's max_tokens.
	OutputTokens Dist `yaml:"output_tokens"`
	// TokensPerEvent is how many tokens each streamed chunk carries
	// (servers that batch several decoding steps per event send more
	// than one).
	TokensPerEvent int `yaml:"tokens_per_event"`
	// Batch is how many requests the server generates for at full speed;
	// with more in flight every TTFT and ITL stretches by in-flight/Batch,
	// so throughput saturates at about Batch/ITL tokens per second.
	Batch int `yaml:"batch"`
	// TimeScale multiplies every latency drawn: 0.1 runs ten times faster.
	TimeScale float64 `yaml:"time_scale"`
	// Drift is the between-run drift (σ of ln latency): every DriftPeriod
	// the latencies move to a new level exp(Drift·z), z a standard normal
	// drawn from Seed and the period's number, as a server's state moves
	// between one run and the next (docs/simulated-runtime.md#drift).
	// 0 keeps them steady.
	Drift       float64       `yaml:"drift"`
	DriftPeriod time.Duration `yaml:"drift_period"`
	// Seed makes the answers and the draws repeatable.
	Seed uint64 `yaml:"seed"`
	// Models are listed by GET /v1/models besides the names requests
	// asked for; any name is served.
	Models []string `yaml:"models"`
	// Dialect is the API served: DialectOpenAI (chat completions and
	// completions, the default) or DialectAnthropic (the Messages API).
	// Only agentd sim sets it (--dialect); agentd run's built-in runtime
	// speaks OpenAI's.
	Dialect string `yaml:"dialect"`
	// Serving, when set, is the serving model: a batch cap with a queue,
	// a KV cache with preemption, prefill per prompt token and tensor
	// parallelism (Serving; docs/simulated-runtime.md#serving-model). A
	// run's engine settings set it (ApplyEngine).
	Serving *Serving `yaml:"serving"`
	Faults  `yaml:",inline"`
}

// Dialects the simulated runtime speaks.
const (
	DialectOpenAI    = "openai"
	DialectAnthropic = "anthropic"
)

// Faults are the shares of requests (each in [0,1], together at most 1)
// that fail in each way. One draw per request picks at most one.
type Faults struct {
	// HTTP5xx answers HTTP 500 at once; HTTP429 answers HTTP 429 with
	// Retry-After: 1.
	HTTP5xx float64 `yaml:"fault_5xx"`
	HTTP429 float64 `yaml:"fault_429"`
	// Stall stops sending midway, keeping the connection open until the
	// client gives up or StallMax passes (then the connection is cut).
	Stall float64 `yaml:"fault_stall"`
	// Disconnect cuts the connection midway: no finish_reason, no [DONE].
	Disconnect float64 `yaml:"fault_disconnect"`
	// Malformed sends an event whose data is not JSON midway (and then
	// carries on); non-streaming, the body is cut JSON.
	Malformed float64 `yaml:"fault_malformed"`
	// StallMax bounds a stall; it is not scaled by TimeScale.
	StallMax time.Duration `yaml:"stall_max"`
}

// MaxOutputTokens bounds an answer's length whatever OutputTokens draws.
const MaxOutputTokens = 1 << 20

// DefaultConfig is a small model on a busy GPU: TTFT around 120 ms with a
// long tail, 15 ms per token, about 200 tokens per answer, eight requests
// at full speed, no faults.
func DefaultConfig() Config {
	return Config{
		TTFT:           Dist{Kind: KindLognormal, A: float64(120 * time.Millisecond), B: 0.5, Durations: true},
		ITL:            Dist{Kind: KindNormal, A: float64(15 * time.Millisecond), B: float64(3 * time.Millisecond), Durations: true},
		OutputTokens:   Dist{Kind: KindNormal, A: 200, B: 60},
		TokensPerEvent: 1,
		Batch:          8,
		TimeScale:      1,
		DriftPeriod:    10 * time.Second,
		Faults:         Faults{StallMax: 10 * time.Minute},
	}
}

// withDefaults fills unset fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.TTFT.IsZero() {
		c.TTFT = d.TTFT
	}
	if c.ITL.IsZero() {
		c.ITL = d.ITL
	}
	if c.OutputTokens.IsZero() {
		c.OutputTokens = d.OutputTokens
	}
	if c.TokensPerEvent <= 0 {
		c.TokensPerEvent = d.TokensPerEvent
	}
	if c.Batch <= 0 {
		c.Batch = d.Batch
	}
	if c.TimeScale <= 0 {
		c.TimeScale = d.TimeScale
	}
	if c.StallMax <= 0 {
		c.StallMax = d.StallMax
	}
	if c.DriftPeriod <= 0 {
		c.DriftPeriod = d.DriftPeriod
	}
	return c
}

// distFlag binds a Dist to a flag, checking its unit as it is set.
type distFlag struct {
	d         *Dist
	name      string
	durations bool
}

func (f distFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f distFlag) Set(s string) error {
	d, err := ParseDist(s)
	if err == nil {
		err = checkUnit(s, d, f.durations)
	}
	if err != nil {
		return fmt.Errorf("--%s %w", f.name, err)
	}
	*f.d = d
	return nil
}

// checkUnit says whether d suits a time (durations) or a count setting.
// text is d as the user wrote it.
func checkUnit(text string, d Dist, durations bool) error {
	switch {
	case durations && !d.fitsDurations():
		return fmt.Errorf("%q: times are durations such as 20ms, not plain numbers", text)
	case !durations && d.Durations:
		return fmt.Errorf("%q: token counts are plain numbers, not durations", text)
	}
	return nil
}

// listFlag is a comma-separated list; setting the flag replaces the
// list from a file, repeating it adds to the list.
type listFlag struct {
	l   *[]string
	set bool
}

func (f *listFlag) String() string {
	if f.l == nil {
		return ""
	}
	return strings.Join(*f.l, ",")
}

func (f *listFlag) Set(s string) error {
	if !f.set {
		*f.l, f.set = nil, true
	}
	for m := range strings.SplitSeq(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			*f.l = append(*f.l, m)
		}
	}
	return nil
}

const distHelp = " (const:V, uniform:MIN,MAX, normal:MEAN,STDDEV, lognormal:MEDIAN,SIGMA, exp:MEAN)"

// RegisterFlags binds every setting to a --sim-… flag whose default is
// the setting's current value, so flags parsed after a file is read
// override the file.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(distFlag{&c.TTFT, "sim-ttft", true}, "sim-ttft", "sim: time to first token, a `distribution` of durations"+distHelp)
	fs.Var(distFlag{&c.ITL, "sim-itl", true}, "sim-itl", "sim: inter-token latency, a `distribution` of durations"+distHelp)
	fs.Var(distFlag{&c.OutputTokens, "sim-output-tokens", false}, "sim-output-tokens", "sim: answer length in tokens, a `distribution` of plain numbers"+distHelp+"; capped by max_tokens")
	fs.IntVar(&c.TokensPerEvent, "sim-tokens-per-event", c.TokensPerEvent, "sim: tokens carried by each streamed chunk")
	fs.IntVar(&c.Batch, "sim-batch", c.Batch, "sim: requests generated at full speed; past it TTFT and ITL stretch by in-flight/batch")
	fs.Float64Var(&c.TimeScale, "sim-time-scale", c.TimeScale, "sim: multiplies every latency drawn (0.1 is ten times faster)")
	fs.Float64Var(&c.Drift, "sim-drift", c.Drift, "sim: between-run drift, σ of ln latency: every --sim-drift-period the latencies move to a new seeded level (0: steady)")
	fs.DurationVar(&c.DriftPeriod, "sim-drift-period", c.DriftPeriod, "sim: how long each drift level lasts")
	fs.Uint64Var(&c.Seed, "sim-seed", c.Seed, "sim: seed for the answers and the draws")
	fs.Var(&listFlag{l: &c.Models}, "sim-models", "sim: comma-separated model `names` GET /v1/models lists besides those requested (any name is served)")
	fs.Float64Var(&c.HTTP5xx, "sim-fault-5xx", c.HTTP5xx, "sim: share of requests answered HTTP 500")
	fs.Float64Var(&c.HTTP429, "sim-fault-429", c.HTTP429, "sim: share of requests answered HTTP 429")
	fs.Float64Var(&c.Stall, "sim-fault-stall", c.Stall, "sim: share of requests that go silent midway (until the client gives up or --sim-stall-max)")
	fs.Float64Var(&c.Disconnect, "sim-fault-disconnect", c.Disconnect, "sim: share of requests whose connection is cut midway")
	fs.Float64Var(&c.Malformed, "sim-fault-malformed", c.Malformed, "sim: share of requests with an event that is not JSON")
	fs.DurationVar(&c.StallMax, "sim-stall-max", c.StallMax, "sim: longest a stalled request stays silent before its connection is cut")
}

// Validate checks every setting; each error names the flag.
func (c *Config) Validate() error {
	var errs []error
	for _, d := range []struct {
		name      string
		d         Dist
		durations bool
	}{{"sim-ttft", c.TTFT, true}, {"sim-itl", c.ITL, true}, {"sim-output-tokens", c.OutputTokens, false}} {
		if d.d.IsZero() {
			errs = append(errs, fmt.Errorf("--%s is not set", d.name))
		} else if err := checkUnit(d.d.String(), d.d, d.durations); err != nil {
			errs = append(errs, fmt.Errorf("--%s %w", d.name, err))
		}
	}
	if c.TokensPerEvent < 1 || c.TokensPerEvent > 1024 {
		errs = append(errs, fmt.Errorf("--sim-tokens-per-event must be 1 to 1024 (got %d)", c.TokensPerEvent))
	}
	if c.Batch < 1 || c.Batch > 1_000_000 {
		errs = append(errs, fmt.Errorf("--sim-batch must be 1 to 1000000 (got %d)", c.Batch))
	}
	if !(c.TimeScale > 0 && c.TimeScale <= 1000) {
		errs = append(errs, fmt.Errorf("--sim-time-scale must be above 0 and at most 1000 (got %g)", c.TimeScale))
	}
	if !(c.Drift >= 0 && c.Drift <= 1) {
		errs = append(errs, fmt.Errorf("--sim-drift must be from 0 to 1 (got %g)", c.Drift))
	}
	if c.DriftPeriod < 0 {
		errs = append(errs, fmt.Errorf("--sim-drift-period must not be negative (got %s)", c.DriftPeriod))
	}
	sum := 0.0
	for _, f := range []struct {
		name string
		p    float64
	}{{"5xx", c.HTTP5xx}, {"429", c.HTTP429}, {"stall", c.Stall}, {"disconnect", c.Disconnect}, {"malformed", c.Malformed}} {
		if !(f.p >= 0 && f.p <= 1) {
			errs = append(errs, fmt.Errorf("--sim-fault-%s must be between 0 and 1 (got %g)", f.name, f.p))
			continue
		}
		sum += f.p
	}
	if sum > 1+1e-9 {
		errs = append(errs, fmt.Errorf("--sim-fault-… shares add up to %g; together they must be at most 1", sum))
	}
	if c.StallMax <= 0 {
		errs = append(errs, fmt.Errorf("--sim-stall-max must be positive (got %s)", c.StallMax))
	}
	if c.Serving != nil {
		if err := c.Serving.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Dialect != "" && c.Dialect != DialectOpenAI && c.Dialect != DialectAnthropic {
		errs = append(errs, fmt.Errorf("--dialect %q: %s or %s", c.Dialect, DialectOpenAI, DialectAnthropic))
	}
	for _, m := range c.Models {
		if strings.TrimSpace(m) == "" {
			errs = append(errs, errors.New("--sim-models: a model name is empty"))
			break
		}
	}
	return errors.Join(errs...)
}
