// Package bench holds the benchmark manifest: one schema for the create
// form, the YAML/JSON manifest and the API, its decoding and its
// validation, with every error naming the field path it is about.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// Runtimes agentd can drive or will drive; a target names one.
// "openai" and "anthropic" are remote APIs in their dialects (agentd run
// --runtime openai|anthropic); other remote providers are named by the
// provider table (jobs.Providers) and reach a benchmark only as a fleet's
// "provider:model" target.
var Runtimes = []string{"sim", "openai", "anthropic", "vllm", "sglang", "tgi", "llama-cpp", "ollama"}

// Scorers a benchmark can name ("" scores nothing).
var Scorers = []string{"", "exact", "f1", "regex", "choice", "numeric", "contains", "json", "json-schema", "refusal", "bleu", "rouge", "rouge1", "rouge2", "rougeL", "rougeLsum",
	"rouge1-stem", "rouge2-stem", "rougeL-stem", "rougeLsum-stem", "triviaqa-em", "triviaqa-f1", "codexglue-bleu", "humaneval", "mbpp", "exec"}

// ScorerOptions are the settings of the scorers that take some.
type ScorerOptions struct {
	// Exec sets the code-execution scorers (humaneval, mbpp, exec).
	Exec *sandbox.ExecOptions `json:"exec,omitempty" yaml:"exec,omitempty"`
	// Judge sets the LLM judge of `scorer: judge`.
	// Its rules depend on the judging's mode: JudgeOptions.Validate.
	Judge *JudgeOptions `json:"judge,omitempty" yaml:"judge,omitempty" validate:"-"`
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
	Model    string `json:"model" yaml:"model" validate:"required,model_name" msg_required:"manifest.choose_model"`
	Runtime  string `json:"runtime" yaml:"runtime" validate:"runtime"`
	Hardware string `json:"hardware" yaml:"hardware" validate:"required,hardware" msg_required:"manifest.choose_hardware"`
	// Remote marks a remote provider's model (a fleet's "openai:MODEL"
	// target), served black-box: the hardware is the agent's, not the
	// model's, so the model's memory need is not checked against it.
	Remote bool `json:"-" yaml:"-"`
	// FewShot, when set, is this target's few-shot setting instead of the
	// benchmark's (so a 0-shot and a 5-shot run of a model sit side by
	// side in one benchmark).
	FewShot *FewShot `json:"fewshot,omitempty" yaml:"fewshot,omitempty"`
	// Engine is the runtime's settings for this target, name to value
	// ({max_num_seqs: 128}), from the allow-list of its runtime
	// (jobs.EngineParams; docs/benchmarks.md#engine-settings). They are
	// part of the target: two targets that differ only in them are two
	// configurations side by side.
	Engine map[string]any `json:"engine,omitempty" yaml:"engine,omitempty"`
	// Matrix expands the target over lists of engine settings, one
	// configuration per combination ({max_num_seqs: [64, 128],
	// tensor_parallel_size: [1, 2]} is four), each value checked as an
	// engine setting (docs/benchmarks.md#configuration-matrix).
	Matrix map[string][]any `json:"matrix,omitempty" yaml:"matrix,omitempty"`
}

// EngineSettings is t's engine settings checked against its runtime's
// allow-list, and the faults of those refused; gpus is the hardware's GPU
// count (below 0: not known, not checked).
func (t Target) EngineSettings(gpus int) (jobs.Engine, []jobs.EngineFault) {
	return jobs.CheckEngine(t.Runtime, t.Engine, gpus)
}

// engineErrors are t's refused engine settings as field errors at
// path.engine.NAME.
func engineErrors(path string, faults []jobs.EngineFault) Errors {
	var errs Errors
	for _, f := range faults {
		errs = append(errs, valid.FromError(path+".engine."+f.Name, f.Err))
	}
	return errs
}

// Manifest describes a benchmark: a dataset × targets, under one load
// profile, sampling and scorer.
type Manifest struct {
	Name     string           `json:"name" yaml:"name" validate:"notblank,max=200,text" msg_notblank:"manifest.name_benchmark"`
	Dataset  DatasetRef       `json:"dataset" yaml:"dataset"`
	Targets  []Target         `json:"targets" yaml:"targets" validate:"min=1,max=50,dive" msg:"manifest.targets"`
	Load     jobs.LoadProfile `json:"load" yaml:"load"`
	Sampling jobs.Sampling    `json:"sampling" yaml:"sampling"`
	Scorer   string           `json:"scorer" yaml:"scorer" validate:"scorer"`
	// FewShot builds each run's k-shot prompts from the dataset (see
	// FewShot); a target's own setting wins.
	FewShot *FewShot `json:"fewshot,omitempty" yaml:"fewshot,omitempty"`
	// ScorerOptions holds the settings of scorers that take some (code
	// execution's, the judge's, regex's pattern, json-schema's schema).
	ScorerOptions *ScorerOptions `json:"scorer_options,omitempty" yaml:"scorer_options,omitempty"`
	SLO           jobs.SLO       `json:"slo" yaml:"slo"`

	// Synthetic, instead of Dataset, generates the benchmark's dataset
	// (stored as an ordinary dataset, with the benchmark).
	// Its rules are checked by validateSource, after its defaults.
	Synthetic *synth.Spec `json:"synthetic,omitempty" yaml:"synthetic,omitempty" validate:"-"`

	// Sim sets how often each model answers right on the simulated
	// runtime (the server writes those answers when it plans the runs).
	Sim *SimSettings `json:"sim,omitempty" yaml:"sim,omitempty"`

	// Repeats runs each target that many times (0 means 1): the verdict
	// then decides on the spread between the repeats
	// (docs/concepts.md#comparability-and-noise).
	Repeats int `json:"repeats,omitempty" yaml:"repeats,omitempty" validate:"min=0,max=10" msg:"manifest.repeats"`

	// Search, instead of running every configuration in full, runs a
	// budgeted search over them (successive halving;
	// docs/benchmarks.md#budgeted-search).
	Search *Search `json:"search,omitempty" yaml:"search,omitempty"`
}

// Runs is how many runs each target gets: Repeats, at least 1.
func (m Manifest) Runs() int { return max(m.Repeats, 1) }

// DatasetRef names a dataset by id (a number) or by name (a string).
type DatasetRef struct {
	ID   int64
	Name string
}

// UnmarshalYAML reads a number as the id and anything else as the name.
func (d *DatasetRef) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return i18n.NewError("manifest.dataset_ref", "Line", n.Line)
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
type FieldError = valid.FieldError

// Errors is a list of field errors; it is itself an error.
type Errors = valid.Errors

// MaxManifestBytes bounds a manifest upload.
const MaxManifestBytes = 1 << 20

// Decode reads a manifest in YAML or JSON (JSON is YAML). Unknown fields
// are errors, so a typo does not silently fall back to a default.
func Decode(r io.Reader) (Manifest, error) {
	var m Manifest
	err := valid.ReadYAML(r, MaxManifestBytes, "manifest.the_manifest", &m)
	return m, err
}

// NewRules returns a validator for manifests and for anything holding
// their parts (targets, judge options): valid's rules plus the names of
// the runtimes (rule runtime) and scorers (rule scorer), fields named by
// their json, yaml or form tag. The caller may register more rules before
// sharing it.
func NewRules() *valid.Validator {
	return valid.New("json", "yaml", "form").
		RegisterChoice("runtime", Runtimes).
		RegisterChoice("scorer", append(append([]string(nil), Scorers...), ScorerJudge))
}

// rules is the manifest's validator, built once and never changed.
var rules = sync.OnceValue(NewRules)

// finite reports whether x is a number JSON and PostgreSQL can carry: not
// NaN (YAML's .nan) nor infinite (.inf), which would pass every range check
// written as "x < lo || x > hi" and then fail when the job is written.
func finite(x float64) bool { return valid.Finite(x) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Validate checks everything that needs no database. The checks against
// what exists (dataset, models, hardware, agents) are the benchmark service's.
//
// The rules of one field are its struct tags (here and in jobs'
// LoadProfile, Sampling and SLO); the steps after them are the rules that
// weigh one field against another.
func (m Manifest) Validate() Errors {
	var errs Errors
	for _, e := range rules().Struct(m) {
		// A remote target's runtime is its provider's name, checked
		// against the provider table by the fleet.
		var i int
		if n, _ := fmt.Sscanf(e.Path, "targets[%d].runtime", &i); n == 1 && i < len(m.Targets) && m.Targets[i].Remote {
			continue
		}
		errs = append(errs, e)
	}
	errs = append(errs, m.validateSource()...)
	errs = append(errs, m.validateDistinctTargets()...)
	errs = append(errs, m.validateLoad()...)
	errs = append(errs, m.validateScoring()...)
	errs = append(errs, m.validateSearch()...)
	return errs
}

// validateSource: the items come from a dataset or a synthetic spec,
// exactly one of them.
func (m Manifest) validateSource() Errors {
	var errs Errors
	if m.Synthetic == nil {
		switch {
		case m.Dataset.ID <= 0 && strings.TrimSpace(m.Dataset.Name) == "":
			errs.Say("dataset", "manifest.choose_dataset")
		case !dataset.IsText(m.Dataset.Name) || len(m.Dataset.Name) > 200:
			errs.Say("dataset", "manifest.dataset_name")
		}
		return errs
	}
	if m.Dataset.ID > 0 || m.Dataset.Name != "" {
		errs.Say("synthetic", "manifest.dataset_or_synthetic")
	}
	spec := *m.Synthetic
	spec.Normalize()
	_, serrs := spec.Validate()
	errs = append(errs, serrs.Prefix("synthetic")...)
	return errs
}

// validateDistinctTargets: no target twice (its engine settings, which
// are part of it, checked on the way).
func (m Manifest) validateDistinctTargets() Errors {
	var errs Errors
	type key struct {
		model, runtime, hardware string
		remote                   bool
		k                        int
		seed                     int64
		exemplars                string
		engine                   string
	}
	seen := map[key]int{}
	errs = append(errs, checkExemplars(m.FewShot, "fewshot")...)
	for i, t := range m.Targets {
		path := fmt.Sprintf("targets[%d]", i)
		errs = append(errs, checkExemplars(t.FewShot, path+".fewshot")...)
		_, faults := t.EngineSettings(-1)
		errs = append(errs, engineErrors(path, faults)...)
		merrs := checkMatrix(path, t, -1)
		if len(merrs) > 0 {
			errs = append(errs, merrs...)
			continue
		}
		k, seed, exemplars := fewShotOf(m, t)
		for _, c := range t.configurations(i) {
			engine, _ := c.Target.EngineSettings(-1)
			id := key{t.Model, t.Runtime, t.Hardware, t.Remote, k, seed, exemplars, engine.Key()}
			if j, dup := seen[id]; dup {
				errs.Say(path, "manifest.same_target", "J", j)
			}
			seen[id] = i
		}
	}
	alone := slices.ContainsFunc(m.Targets, func(t Target) bool { return t.matrixSize(MaxConfigurations) > MaxConfigurations })
	if !alone && m.countConfigurations() > MaxConfigurations {
		// Said once: a matrix too large alone is named at its own path.
		errs.Say("targets", "manifest.configurations_too_many", "Max", MaxConfigurations)
	}
	return errs
}

// validateLoad: what the load profile needs of its other fields, and
// that no field belongs to another profile.
func (m Manifest) validateLoad() Errors {
	var errs Errors
	l := m.Load
	switch l.Profile {
	case jobs.LoadConcurrency:
		if l.Concurrency < 1 || l.Concurrency > 4096 {
			errs.Say("load.concurrency", "manifest.concurrency")
		}
	case jobs.LoadConstant, jobs.LoadPoisson:
		if finite(l.Rate) && (l.Rate <= 0 || l.Rate > 100000) {
			errs.Say("load.rate", "manifest.rate")
		}
	case jobs.LoadSweep:
		errs = append(errs, validateSweep(l)...)
	case jobs.LoadTrace:
		errs = append(errs, m.validateTrace()...)
	case jobs.LoadLengthSweep:
		errs = append(errs, m.validateLengthSweep()...)
	}
	if l.Lengths != nil && l.Profile != jobs.LoadLengthSweep {
		errs.Say("load.lengths", "manifest.lengths_only")
	}
	if finite(l.Speed) && l.Speed != 0 && l.Profile != jobs.LoadTrace {
		errs.Say("load.speed", "manifest.speed_trace_only")
	}
	return errs
}

// validateSweep: a sweep's ceiling, and its steps given as a count, as
// rates or as concurrencies, each distinct.
func validateSweep(l jobs.LoadProfile) Errors {
	var errs Errors
	if l.Concurrency < 1 || l.Concurrency > 4096 {
		errs.Say("load.concurrency", "manifest.sweep_concurrency")
	}
	switch {
	case len(l.Rates) > 0 && len(l.Concurrencies) > 0:
		errs.Say("load.rates", "manifest.rates_or_concurrencies")
	case len(l.Rates) > 20 || len(l.Concurrencies) > 20:
		errs.Say("load.rates", "manifest.steps_max")
	case len(l.Rates) > 0:
		seen := map[string]int{}
		for i, r := range l.Rates {
			// Steps are told apart by their rate to the hundredth.
			key := fmt.Sprintf("%.2f", r)
			switch j, dup := seen[key]; {
			case !finite(r):
				// The rates' own rule (finite) has said so.
			case r < 0.01 || r > 100000:
				errs.Say(fmt.Sprintf("load.rates[%d]", i), "manifest.sweep_rate")
			case dup:
				errs.Say(fmt.Sprintf("load.rates[%d]", i), "manifest.same_rate", "J", j)
			}
			seen[key] = i
		}
	case len(l.Concurrencies) > 0:
		seen := map[int]int{}
		for i, c := range l.Concurrencies {
			if c < 1 || c > 4096 {
				errs.Say(fmt.Sprintf("load.concurrencies[%d]", i), "manifest.concurrency")
			} else if j, dup := seen[c]; dup {
				errs.Say(fmt.Sprintf("load.concurrencies[%d]", i), "manifest.same_concurrency", "J", j)
			}
			seen[c] = i
		}
	case l.Steps < 2 || l.Steps > 20:
		errs.Say("load.steps", "manifest.steps")
	}
	return errs
}

// validateLengthSweep: a length sweep's lengths, each within bounds and
// none twice, its one concurrency or rate, and no scorer: its prompts are
// generated and have no reference (docs/benchmarks.md#length-sweeps).
func (m Manifest) validateLengthSweep() Errors {
	var errs Errors
	l := m.Load
	if l.Concurrency < 0 || l.Concurrency > 4096 {
		errs.Say("load.concurrency", "manifest.length_concurrency")
	}
	if finite(l.Rate) && (l.Rate < 0 || l.Rate > 100000) {
		errs.Say("load.rate", "manifest.length_rate")
	}
	if m.Scorer != "" {
		errs.Say("scorer", "manifest.length_no_scorer")
	}
	if m.Synthetic != nil && m.Synthetic.Kind != synth.KindRandom {
		errs.Say("synthetic.kind", "manifest.length_synthetic")
	}
	if l.Lengths == nil || len(l.Lengths.Input) == 0 {
		errs.Say("load.lengths.input", "manifest.lengths_input")
		return errs
	}
	errs = append(errs, distinctLengths("load.lengths.input", l.Lengths.Input)...)
	errs = append(errs, distinctLengths("load.lengths.output", l.Lengths.Output)...)
	if n := len(l.Lengths.Input) * max(len(l.Lengths.Output), 1); n > jobs.MaxLengthSteps {
		errs.Say("load.lengths", "manifest.lengths_steps", "Max", jobs.MaxLengthSteps, "N", n)
	}
	return errs
}

// distinctLengths: each of a length sweep's lengths at path is a token
// count within bounds and none is given twice.
func distinctLengths(path string, lengths []int) Errors {
	var errs Errors
	seen := map[int]int{}
	for i, n := range lengths {
		at := fmt.Sprintf("%s[%d]", path, i)
		if n < 1 || n > jobs.MaxLengthTokens {
			errs.Say(at, "manifest.length_tokens", "Max", jobs.MaxLengthTokens)
		} else if j, dup := seen[n]; dup {
			errs.Say(at, "manifest.same_length", "Path", path, "J", j)
		}
		seen[n] = i
	}
	return errs
}

// validateTrace: a replay's speed and cap, and a trace to replay.
func (m Manifest) validateTrace() Errors {
	var errs Errors
	l := m.Load
	if finite(l.Speed) && (l.Speed < 0 || l.Speed > 1000) {
		errs.Say("load.speed", "manifest.trace_speed", "Got", l.Speed)
	}
	if l.Concurrency < 0 || l.Concurrency > 4096 {
		errs.Say("load.concurrency", "manifest.trace_concurrency")
	}
	if m.Synthetic != nil && m.Synthetic.Kind != synth.KindTrace {
		errs.Say("load.profile", "manifest.trace_needs_trace")
	}
	return errs
}

// validateScoring: the scorer's options, each only for the scorer that
// takes it (the code-execution options' own rules are their tags).
func (m Manifest) validateScoring() Errors {
	errs := m.validateScorerOptions()
	if contains(Scorers, m.Scorer) {
		errs = append(errs, m.ScorerOptions.validate(m.Scorer)...)
	}
	return errs
}
