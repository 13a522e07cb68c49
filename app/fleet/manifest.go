// Package fleet holds fleet manifests: several scenarios (dataset × load
// profile × scorer × sampling) run against several targets (a model on a
// runtime and hardware profile, or a remote provider's model written
// "openai:gpt-4o-mini"). Submitting one creates a benchmark per scenario,
// with a run per scenario × target, each run with a deterministic string
// id; the report sums them up.
package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/jobs"
)

// Limits of a fleet manifest.
const (
	MaxScenarios = 20
	MaxTargets   = 50
	// MaxRuns bounds scenarios × targets.
	MaxRuns = 200
	// MaxManifestBytes bounds a fleet manifest upload.
	MaxManifestBytes = 1 << 20
	// DefaultRemoteHardware is the hardware profile of the agents that
	// serve remote providers' targets when the manifest names none: an
	// agent on a machine without GPUs registers as "cpu".
	DefaultRemoteHardware = "cpu"
)

// Providers maps a remote provider, as written before the colon of a
// "provider:model" target, to the runtime whose agents serve it. Agents
// reach a remote provider through its OpenAI-compatible API, started as
// `agentd run --runtime openai --endpoint URL` (they then take runs of the
// "openai" runtime); any OpenAI-compatible service can stand behind it.
var Providers = map[string]string{"openai": "openai"}

// Manifest is a fleet: scenarios × targets.
type Manifest struct {
	// Name is part of every run's id: lower-case letters, digits and
	// hyphens.
	Name string `json:"name" yaml:"name" validate:"required,fleet_name"`
	// RemoteHardware is the hardware profile of the agents serving the
	// "provider:model" targets (DefaultRemoteHardware when empty).
	RemoteHardware string     `json:"remote_hardware,omitempty" yaml:"remote_hardware,omitempty" validate:"omitempty,hardware"`
	Scenarios      []Scenario `json:"scenarios" yaml:"scenarios" validate:"required,min=1,max=20,dive"`
	Targets        []Target   `json:"targets" yaml:"targets" validate:"required,min=1,max=50,dive"`
}

// Scenario is what every target is asked to do once: a dataset under a
// load profile, sampling and scorer.
type Scenario struct {
	Name          string               `json:"name" yaml:"name" validate:"required,scenario_name"`
	Dataset       bench.DatasetRef     `json:"dataset" yaml:"dataset"`
	Load          jobs.LoadProfile     `json:"load" yaml:"load"`
	Sampling      jobs.Sampling        `json:"sampling" yaml:"sampling"`
	Scorer        string               `json:"scorer,omitempty" yaml:"scorer,omitempty"`
	ScorerOptions *bench.ScorerOptions `json:"scorer_options,omitempty" yaml:"scorer_options,omitempty"`
	SLO           jobs.SLO             `json:"slo,omitempty" yaml:"slo,omitempty"`
}

// Target is a model on a runtime on a hardware profile. Written as a
// string "provider:model" it is a remote provider's model: Provider is
// set, Runtime is the provider's (see Providers) and Hardware the
// manifest's RemoteHardware.
type Target struct {
	Model    string `json:"model" yaml:"model" validate:"required,model_name"`
	Runtime  string `json:"runtime" yaml:"runtime" validate:"required,runtime"`
	Hardware string `json:"hardware" yaml:"hardware" validate:"required,hardware"`
	Provider string `json:"-" yaml:"-" validate:"omitempty,provider"`
}

// String is the target as a person reads it.
func (t Target) String() string {
	if t.Provider != "" {
		return t.Provider + ":" + t.Model
	}
	return t.Model + " on " + t.Runtime + " / " + t.Hardware
}

// key identifies a target within a fleet.
func (t Target) key() string { return t.Model + "\x00" + t.Runtime + "\x00" + t.Hardware }

var targetKeys = []string{"model", "runtime", "hardware"}

// UnmarshalYAML reads a mapping {model, runtime, hardware} or a string
// "provider:model".
func (t *Target) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		provider, model, ok := strings.Cut(n.Value, ":")
		if !ok || provider == "" {
			return fmt.Errorf("line %d: a target is a mapping {model, runtime, hardware} or a remote provider's model written provider:model, such as openai:gpt-4o-mini (got %q)", n.Line, n.Value)
		}
		t.Provider, t.Model, t.Runtime = provider, model, Providers[provider]
		return nil
	case yaml.MappingNode:
		// Decoding a node inside a custom unmarshaller does not check
		// for unknown fields: do it here.
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(targetKeys, k.Value) {
				return fmt.Errorf("line %d: field %s not found in a target (model, runtime, hardware)", k.Line, k.Value)
			}
		}
		type plain Target
		var p plain
		if err := n.Decode(&p); err != nil {
			return err
		}
		*t = Target(p)
		return nil
	}
	return fmt.Errorf("line %d: a target is a mapping {model, runtime, hardware} or a string provider:model", n.Line)
}

// MarshalJSON writes a remote target back as its "provider:model" string.
func (t Target) MarshalJSON() ([]byte, error) {
	if t.Provider != "" {
		return json.Marshal(t.Provider + ":" + t.Model)
	}
	type plain Target
	return json.Marshal(plain(t))
}

// FieldError names the manifest field that is wrong by its path, such as
// "scenarios[1].load.rate" or "targets[0].model".
type FieldError = bench.FieldError

// Errors is a list of field errors; it is itself an error.
type Errors = bench.Errors

// Decode reads a fleet manifest in YAML or JSON (JSON is YAML). Unknown
// fields are errors; remote targets get their hardware profile.
func Decode(r io.Reader) (Manifest, error) {
	var m Manifest
	b, err := io.ReadAll(io.LimitReader(r, MaxManifestBytes+1))
	if err != nil {
		return m, err
	}
	if len(b) > MaxManifestBytes {
		return m, Errors{{Path: "", Message: fmt.Sprintf("the fleet manifest is larger than %d bytes", MaxManifestBytes)}}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return m, Errors{{Path: "", Message: "the fleet manifest is empty"}}
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
	m.normalize()
	return m, nil
}

// normalize gives remote targets the remote hardware profile.
func (m *Manifest) normalize() {
	hw := m.RemoteHardware
	if hw == "" {
		hw = DefaultRemoteHardware
	}
	for i := range m.Targets {
		if m.Targets[i].Provider != "" {
			m.Targets[i].Hardware = hw
		}
	}
}

var (
	fleetNamePattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	scenarioNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$`)
	hardwarePattern     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// newValidator is the fleet manifest's validator: its rules, and field
// names as the manifest spells them.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			return f.Name
		}
		return name
	})
	str := func(ok func(string) bool) validator.Func {
		return func(fl validator.FieldLevel) bool { return ok(fl.Field().String()) }
	}
	rules := map[string]validator.Func{
		"fleet_name":    str(fleetNamePattern.MatchString),
		"scenario_name": str(scenarioNamePattern.MatchString),
		"hardware":      str(hardwarePattern.MatchString),
		"model_name":    str(func(s string) bool { return jobs.CheckModelName(s) == nil }),
		"runtime":       str(func(s string) bool { return slices.Contains(bench.Runtimes, s) }),
		"provider":      str(func(s string) bool { _, ok := Providers[s]; return ok }),
	}
	for tag, fn := range rules {
		if err := v.RegisterValidation(tag, fn); err != nil {
			panic(err) // a programming error: the tags above are valid
		}
	}
	v.RegisterStructValidation(validateManifest, Manifest{})
	return v
}

// validateManifest checks what spans fields: distinct scenario names and
// targets, and the number of runs.
func validateManifest(sl validator.StructLevel) {
	m := sl.Current().Interface().(Manifest)
	names := map[string]int{}
	for i, s := range m.Scenarios {
		if j, dup := names[strings.ToLower(s.Name)]; dup && s.Name != "" {
			sl.ReportError(s.Name, fmt.Sprintf("scenarios[%d].name", i), "Name", "unique_scenario", fmt.Sprint(j))
		}
		names[strings.ToLower(s.Name)] = i
	}
	targets := map[string]int{}
	for i, t := range m.Targets {
		if j, dup := targets[t.key()]; dup {
			sl.ReportError(t.Model, fmt.Sprintf("targets[%d]", i), "Targets", "unique_target", fmt.Sprint(j))
		}
		targets[t.key()] = i
	}
	if n := len(m.Scenarios) * len(m.Targets); n > MaxRuns {
		sl.ReportError(n, "targets", "Targets", "max_runs", fmt.Sprint(n))
	}
}

// message is what a person is told about a failed rule.
func message(fe validator.FieldError) string {
	got := fmt.Sprintf(" (got %q)", fmt.Sprint(fe.Value()))
	switch fe.Tag() {
	case "required", "min":
		switch fe.Field() {
		case "scenarios":
			return "add at least one scenario (name, dataset, load, sampling, scorer)"
		case "targets":
			return "add at least one target: {model, runtime, hardware} or provider:model"
		case "name":
			return "give it a name"
		}
		if fe.Tag() == "min" {
			return "at least " + fe.Param()
		}
		return "required"
	case "max":
		return fmt.Sprintf("at most %s (got %d)", fe.Param(), reflect.ValueOf(fe.Value()).Len())
	case "fleet_name":
		return "lower-case letters, digits and hyphens, starting with a letter or digit, at most 63 characters" + got
	case "scenario_name":
		return "letters, digits, spaces, '.', '_' and '-', starting with a letter or digit, at most 100 characters" + got
	case "hardware":
		return "a hardware profile such as h100-80gb-x1 or cpu" + got
	case "model_name":
		return jobs.CheckModelName(fe.Value().(string)).Error()
	case "runtime":
		return "must be one of " + strings.Join(bench.Runtimes, ", ") + got
	case "provider":
		return fmt.Sprintf("unknown provider %q: the remote providers are %s (agents reach them through an OpenAI-compatible endpoint, agentd run --runtime openai --endpoint URL)", fe.Value(), strings.Join(providerNames(), ", "))
	case "unique_scenario":
		return "the same name as scenarios[" + fe.Param() + "]"
	case "unique_target":
		return "the same target as targets[" + fe.Param() + "]"
	case "max_runs":
		return fmt.Sprintf("scenarios × targets is %s runs; at most %d per fleet", fe.Param(), MaxRuns)
	}
	return "is not valid (" + fe.Tag() + ")"
}

func providerNames() []string {
	out := make([]string, 0, len(Providers))
	for p := range Providers {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// fieldPath turns the validator's namespace ("Manifest.scenarios[0].name")
// into the manifest's path ("scenarios[0].name").
func fieldPath(fe validator.FieldError) string {
	ns := fe.Namespace()
	if _, rest, ok := strings.Cut(ns, "."); ok {
		ns = rest
	}
	// A remote target's provider is written in the target itself.
	return strings.TrimSuffix(ns, ".Provider")
}

// Validate checks everything that needs no database: the fleet's own
// fields by their rules, then each scenario as a benchmark manifest would
// be checked (its load, sampling, scorer and SLOs), with paths under
// scenarios[i].
func (m Manifest) Validate() Errors {
	var errs Errors
	if err := newValidator().Struct(m); err != nil {
		var verrs validator.ValidationErrors
		if !errors.As(err, &verrs) {
			return Errors{{Path: "", Message: err.Error()}}
		}
		unknownProvider := map[string]bool{}
		for i, t := range m.Targets {
			if t.Provider != "" && t.Runtime == "" {
				unknownProvider[fmt.Sprintf("targets[%d].runtime", i)] = true
			}
		}
		for _, fe := range verrs {
			// An unknown provider has no runtime: say only the former.
			if path := fieldPath(fe); !unknownProvider[path] {
				errs = append(errs, FieldError{Path: path, Message: message(fe)})
			}
		}
	}
	if !utf8.ValidString(m.Name) || len(m.Scenarios) > MaxScenarios || len(m.Targets) > MaxTargets {
		return errs
	}
	for i := range m.Scenarios {
		for _, e := range m.benchManifest(i).Validate() {
			// The name and the targets are the fleet's, checked above.
			if e.Path == "name" || strings.HasPrefix(e.Path, "targets") {
				continue
			}
			errs = append(errs, FieldError{Path: scenarioPath(i, e.Path), Message: e.Message})
		}
	}
	return errs
}

func scenarioPath(i int, path string) string {
	if path == "" {
		return fmt.Sprintf("scenarios[%d]", i)
	}
	return fmt.Sprintf("scenarios[%d].%s", i, path)
}

// benchManifest is scenario i as the benchmark it becomes.
func (m Manifest) benchManifest(i int) bench.Manifest {
	s := m.Scenarios[i]
	targets := make([]bench.Target, len(m.Targets))
	for j, t := range m.Targets {
		targets[j] = bench.Target{Model: t.Model, Runtime: t.Runtime, Hardware: t.Hardware, Remote: t.Provider != ""}
	}
	return bench.Manifest{Name: m.Name + " / " + s.Name, Dataset: s.Dataset, Targets: targets, Load: s.Load,
		Sampling: s.Sampling, Scorer: s.Scorer, ScorerOptions: s.ScorerOptions, SLO: s.SLO}
}
