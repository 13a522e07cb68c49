// Package bench holds the benchmark manifest: one schema for the create
// form, the YAML/JSON manifest and the API, its decoding and its
// validation, with every error naming the field path it is about.
package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/jobs"
)

// Runtimes agentd can drive or will drive; a target names one.
var Runtimes = []string{"sim", "openai", "vllm", "sglang", "tgi", "llama-cpp", "ollama"}

// Scorers a benchmark can name ("" scores nothing).
var Scorers = []string{"", "exact", "f1", "regex", "choice", "numeric", "contains", "json", "json-schema", "bleu", "rouge", "rouge1", "rouge2", "rougeL", "rougeLsum",
	"rouge1-stem", "rouge2-stem", "rougeL-stem", "rougeLsum-stem", "humaneval", "mbpp", "exec"}

// ScorerOptions are the settings of the scorers that take some.
type ScorerOptions struct {
	// Exec sets the code-execution scorers (humaneval, mbpp, exec).
	Exec *sandbox.ExecOptions `json:"exec,omitempty" yaml:"exec,omitempty"`
	// Judge sets the LLM judge of `scorer: judge`.
	Judge *JudgeOptions `json:"judge,omitempty" yaml:"judge,omitempty"`
	// Pattern is the regex scorer's RE2 pattern (see score.Pattern for
	// what it matches). Empty: the regex scorer reads a multiple-choice
	// letter, as the choice scorer does (what regex meant before it took a
	// pattern).
	Pattern string `json:"pattern,omitempty" yaml:"pattern,omitempty"`
	// Schema is the json-schema scorer's JSON Schema document: in YAML a
	// mapping or a string of JSON, in JSON an object.
	Schema JSONDoc `json:"schema,omitempty" yaml:"schema,omitempty"`
}

// Target is one model on one runtime on one hardware profile.
type Target struct {
	Model    string `json:"model" yaml:"model"`
	Runtime  string `json:"runtime" yaml:"runtime"`
	Hardware string `json:"hardware" yaml:"hardware"`
	// Remote marks a remote provider's model (a fleet's "openai:MODEL"
	// target), served black-box: the hardware is the agent's, not the
	// model's, so the model's memory need is not checked against it.
	Remote bool `json:"-" yaml:"-"`
}

// Manifest describes a benchmark: a dataset × targets, under one load
// profile, sampling and scorer.
type Manifest struct {
	Name     string           `json:"name" yaml:"name"`
	Dataset  DatasetRef       `json:"dataset" yaml:"dataset"`
	Targets  []Target         `json:"targets" yaml:"targets"`
	Load     jobs.LoadProfile `json:"load" yaml:"load"`
	Sampling jobs.Sampling    `json:"sampling" yaml:"sampling"`
	Scorer   string           `json:"scorer" yaml:"scorer"`
	// ScorerOptions holds the settings of scorers that take some (code
	// execution's, the judge's, regex's pattern, json-schema's schema).
	ScorerOptions *ScorerOptions `json:"scorer_options,omitempty" yaml:"scorer_options,omitempty"`
	SLO           jobs.SLO       `json:"slo" yaml:"slo"`

	// Synthetic, instead of Dataset, generates the benchmark's dataset
	// (stored as an ordinary dataset, with the benchmark).
	Synthetic *synth.Spec `json:"synthetic,omitempty" yaml:"synthetic,omitempty"`

	// Sim sets how often each model answers right on the simulated
	// runtime (the server writes those answers when it plans the runs).
	Sim *SimSettings `json:"sim,omitempty" yaml:"sim,omitempty"`
}

// DatasetRef names a dataset by id (a number) or by name (a string).
type DatasetRef struct {
	ID   int64
	Name string
}

// UnmarshalYAML reads a number as the id and anything else as the name.
func (d *DatasetRef) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: dataset must be a dataset id or name", n.Line)
	}
	if n.Tag == "!!int" {
		return n.Decode(&d.ID)
	}
	d.Name = n.Value
	return nil
}

// MarshalJSON writes the id when there is one, else the name.
func (d DatasetRef) MarshalJSON() ([]byte, error) {
	if d.ID > 0 {
		return json.Marshal(d.ID)
	}
	return json.Marshal(d.Name)
}

// UnmarshalJSON reads a number as the id and a string as the name.
func (d *DatasetRef) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &d.ID); err == nil {
		return nil
	}
	return json.Unmarshal(b, &d.Name)
}

// FieldError names the manifest field that is wrong, as a path such as
// "targets[1].runtime" or "load.rate".
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Errors is a list of field errors; it is itself an error.
type Errors []FieldError

func (e Errors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fe.Path + ": " + fe.Message
	}
	return strings.Join(parts, "; ")
}

// MaxManifestBytes bounds a manifest upload.
const MaxManifestBytes = 1 << 20

// Decode reads a manifest in YAML or JSON (JSON is YAML). Unknown fields
// are errors, so a typo does not silently fall back to a default.
func Decode(r io.Reader) (Manifest, error) {
	var m Manifest
	b, err := io.ReadAll(io.LimitReader(r, MaxManifestBytes+1))
	if err != nil {
		return m, err
	}
	if len(b) > MaxManifestBytes {
		return m, Errors{{Path: "", Message: fmt.Sprintf("the manifest is larger than %d bytes", MaxManifestBytes)}}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return m, Errors{{Path: "", Message: "the manifest is empty"}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			out := make(Errors, 0, len(te.Errors))
			for _, e := range te.Errors {
				out = append(out, FieldError{Path: "", Message: e})
			}
			return m, out
		}
		return m, Errors{{Path: "", Message: "not valid YAML or JSON: " + err.Error()}}
	}
	return m, nil
}

// finite reports whether x is a number JSON and PostgreSQL can carry: not
// NaN (YAML's .nan) nor infinite (.inf), which would pass every range check
// written as "x < lo || x > hi" and then fail when the job is written.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checkText says what makes s unfit for a text column ("" when nothing):
// PostgreSQL text holds neither NUL characters nor invalid UTF-8.
func checkText(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "must be UTF-8 text"
	case strings.ContainsRune(s, 0):
		return "must not contain NUL characters"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Validate checks everything that needs no database. The checks against
// what exists (dataset, models, hardware, agents) are the planner's.
func (m Manifest) Validate() Errors {
	var errs Errors
	add := func(path, format string, args ...any) {
		errs = append(errs, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if strings.TrimSpace(m.Name) == "" {
		add("name", "give the benchmark a name")
	} else if len(m.Name) > 200 {
		add("name", "at most 200 characters")
	} else if msg := checkText(m.Name); msg != "" {
		add("name", "%s", msg)
	}
	if m.Synthetic != nil {
		if m.Dataset.ID > 0 || m.Dataset.Name != "" {
			add("synthetic", "give a dataset or a synthetic spec, not both")
		}
		spec := *m.Synthetic
		spec.Normalize()
		if _, serrs := spec.Validate(); len(serrs) > 0 {
			for _, e := range serrs {
				add("synthetic."+e.Field, "%s", e.Message)
			}
		}
	} else if m.Dataset.ID <= 0 && strings.TrimSpace(m.Dataset.Name) == "" {
		add("dataset", "choose a dataset (its id or its name), or generate one with synthetic")
	} else if msg := checkText(m.Dataset.Name); msg != "" || len(m.Dataset.Name) > 200 {
		add("dataset", "a dataset id, or a name of at most 200 characters of UTF-8 text without NUL characters")
	}
	switch n := len(m.Targets); {
	case n == 0:
		add("targets", "add at least one target (model, runtime, hardware)")
	case n > 50:
		add("targets", "at most 50 targets per benchmark (got %d)", n)
	}
	seen := map[Target]int{}
	for i, t := range m.Targets {
		p := fmt.Sprintf("targets[%d]", i)
		if t.Model == "" {
			add(p+".model", "choose a model")
		} else if err := jobs.CheckModelName(t.Model); err != nil {
			add(p+".model", "%v", err)
		}
		if !contains(Runtimes, t.Runtime) {
			add(p+".runtime", "must be one of %s (got %q)", strings.Join(Runtimes, ", "), t.Runtime)
		}
		if t.Hardware == "" {
			add(p+".hardware", "choose a hardware profile")
		} else if msg := checkText(t.Hardware); msg != "" || len(t.Hardware) > 64 {
			add(p+".hardware", "a hardware profile such as h100-80gb-x1 (got %q)", t.Hardware)
		}
		if j, dup := seen[t]; dup {
			add(p, "the same target as targets[%d]", j)
		}
		seen[t] = i
	}

	l := m.Load
	switch l.Profile {
	case jobs.LoadSequential:
	case jobs.LoadConcurrency:
		if l.Concurrency < 1 || l.Concurrency > 4096 {
			add("load.concurrency", "between 1 and 4096 requests in flight")
		}
	case jobs.LoadConstant, jobs.LoadPoisson:
		if !finite(l.Rate) {
			add("load.rate", "must be a finite number (got %v)", l.Rate)
		} else if l.Rate <= 0 || l.Rate > 100000 {
			add("load.rate", "a rate above 0 and at most 100000 requests per second")
		}
	case jobs.LoadSweep:
		if l.Concurrency < 1 || l.Concurrency > 4096 {
			add("load.concurrency", "the sweep's highest concurrency, between 1 and 4096")
		}
		switch {
		case len(l.Rates) > 0 && len(l.Concurrencies) > 0:
			add("load.rates", "give rates or concurrencies for the sweep's steps, not both")
		case len(l.Rates) > 20 || len(l.Concurrencies) > 20:
			add("load.rates", "at most 20 steps")
		case len(l.Rates) > 0:
			seen := map[string]int{}
			for i, r := range l.Rates {
				// Steps are told apart by their rate to the hundredth.
				key := fmt.Sprintf("%.2f", r)
				if !(r >= 0.01 && r <= 100000) {
					add(fmt.Sprintf("load.rates[%d]", i), "a rate from 0.01 to 100000 requests per second")
				} else if j, dup := seen[key]; dup {
					add(fmt.Sprintf("load.rates[%d]", i), "the same rate (to the hundredth) as load.rates[%d]", j)
				}
				seen[key] = i
			}
		case len(l.Concurrencies) > 0:
			seen := map[int]int{}
			for i, c := range l.Concurrencies {
				if c < 1 || c > 4096 {
					add(fmt.Sprintf("load.concurrencies[%d]", i), "between 1 and 4096 requests in flight")
				} else if j, dup := seen[c]; dup {
					add(fmt.Sprintf("load.concurrencies[%d]", i), "the same concurrency as load.concurrencies[%d]", j)
				}
				seen[c] = i
			}
		case l.Steps < 2 || l.Steps > 20:
			add("load.steps", "between 2 and 20 steps")
		}
	case jobs.LoadTrace:
		if !finite(l.Speed) || l.Speed < 0 || l.Speed > 1000 {
			add("load.speed", "how many times faster than recorded to replay the trace, above 0 and at most 1000 (0 means 1; got %v)", l.Speed)
		}
		if l.Concurrency < 0 || l.Concurrency > 4096 {
			add("load.concurrency", "at most 4096 requests in flight (0: no cap but the agent's)")
		}
		if m.Synthetic != nil && m.Synthetic.Kind != synth.KindTrace {
			add("load.profile", "the trace profile needs a trace dataset (synthetic kind trace)")
		}
	default:
		add("load.profile", "must be one of %s, %s, %s, %s, %s, %s (got %q)", jobs.LoadSequential, jobs.LoadConcurrency,
			jobs.LoadConstant, jobs.LoadPoisson, jobs.LoadSweep, jobs.LoadTrace, l.Profile)
	}
	if !finite(l.Speed) || (l.Speed != 0 && l.Profile != jobs.LoadTrace) {
		add("load.speed", "only the trace profile has a speed")
	}
	if l.Warmup < 0 {
		add("load.warmup", "cannot be negative")
	}
	if l.MaxRequests < 0 {
		add("load.max_requests", "cannot be negative (0 means all items)")
	}
	if l.MaxDuration < 0 {
		add("load.max_duration", "cannot be negative (0 means no limit)")
	}
	if l.MaxErrors < 0 {
		add("load.max_errors", "cannot be negative (0 means no limit)")
	}

	if !finite(l.Rate) && l.Profile != jobs.LoadConstant && l.Profile != jobs.LoadPoisson {
		// Unused by the profile, but it travels in the job all the same.
		add("load.rate", "must be a finite number (got %v)", l.Rate)
	}

	s := m.Sampling
	switch {
	case s.Temperature != nil && !finite(*s.Temperature):
		add("sampling.temperature", "must be a finite number (got %v)", *s.Temperature)
	case s.Temperature != nil && (*s.Temperature < 0 || *s.Temperature > 2):
		add("sampling.temperature", "between 0 and 2")
	}
	switch {
	case s.TopP != nil && !finite(*s.TopP):
		add("sampling.top_p", "must be a finite number (got %v)", *s.TopP)
	case s.TopP != nil && (*s.TopP <= 0 || *s.TopP > 1):
		add("sampling.top_p", "above 0 and at most 1")
	}
	if s.MaxTokens < 1 || s.MaxTokens > 1_000_000 {
		add("sampling.max_tokens", "between 1 and 1000000 (always set it: some runtimes generate without end otherwise)")
	}
	if len(s.Stop) > 4 {
		add("sampling.stop", "at most 4 stop sequences")
	}
	for i, st := range s.Stop {
		if st == "" {
			add(fmt.Sprintf("sampling.stop[%d]", i), "cannot be empty")
		} else if msg := checkText(st); msg != "" || len(st) > 1000 {
			add(fmt.Sprintf("sampling.stop[%d]", i), "at most 1000 characters of UTF-8 text without NUL characters")
		}
	}
	if s.N < 0 || s.N > jobs.MaxSamples {
		add("sampling.n", "between 1 and %d answers per item (got %d)", jobs.MaxSamples, s.N)
	}
	if !contains(Scorers, m.Scorer) && m.Scorer != ScorerJudge {
		add("scorer", "must be one of %s, %s, or empty (got %q)", strings.Join(Scorers[1:], ", "), ScorerJudge, m.Scorer)
	}
	if m.ScorerOptions != nil {
		for _, msg := range m.ScorerOptions.Exec.Validate("scorer_options.exec") {
			field, text, _ := strings.Cut(msg, ": ")
			add(field, "%s", text)
		}
	}
	errs = append(errs, m.validateScorerOptions()...)
	if contains(Scorers, m.Scorer) {
		errs = append(errs, m.ScorerOptions.validate(m.Scorer)...)
	}
	errs = append(errs, m.Sim.validate()...)
	if m.SLO.TTFT < 0 {
		add("slo.ttft", "cannot be negative")
	}
	if m.SLO.TPOT < 0 {
		add("slo.tpot", "cannot be negative")
	}
	if m.SLO.E2E < 0 {
		add("slo.e2e", "cannot be negative")
	}
	if g := m.SLO.Goodput; g != 0 && !(g > 0 && g <= 1) {
		add("slo.goodput", "must be a share above 0 and at most 1 (0.99: 99 %% of requests meet the SLOs)")
	}
	return errs
}
