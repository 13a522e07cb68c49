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
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/valid"
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

// Manifest is a fleet: scenarios × targets.
type Manifest struct {
	// Name is part of every run's id: lower-case letters, digits and
	// hyphens.
	Name string `json:"name" yaml:"name" validate:"required,fleet_name" msg_required:"fleetdoc.give_name"`
	// Version and Description are the team's own notes on the fleet.
	Version     string `json:"version,omitempty" yaml:"version,omitempty" validate:"omitempty,max=100,text"`
	Description string `json:"description,omitempty" yaml:"description,omitempty" validate:"omitempty,max=2000,text"`
	// RemoteHardware is the hardware profile of the agents serving the
	// "provider:model" targets (DefaultRemoteHardware when empty).
	RemoteHardware string     `json:"remote_hardware,omitempty" yaml:"remote_hardware,omitempty" validate:"omitempty,hardware_slug"`
	Scenarios      []Scenario `json:"scenarios" yaml:"scenarios" validate:"required,min=1,max=20,dive" msg_required:"fleetdoc.add_scenario" msg_min:"fleetdoc.add_scenario"`
	Targets        []Target   `json:"targets" yaml:"targets" validate:"required,min=1,max=50,dive" msg_required:"fleetdoc.add_target" msg_min:"fleetdoc.add_target"`
	// Output chooses the artifacts `ruckus fleet export` writes and
	// where (all of them, under ./fleet-results, when unset).
	Output *Output `json:"output,omitempty" yaml:"output,omitempty"`

	// doc is set when the manifest was written in the fleet document's
	// dialect: its errors are then given under that dialect's paths.
	doc *docManifest
}

// Artifact formats a fleet exports.
const (
	FormatJSON = "json"
	FormatCSV  = "csv"
	FormatHTML = "html"
)

// Formats are the artifact formats, in order.
var Formats = []string{FormatJSON, FormatCSV, FormatHTML}

// Output is where a fleet's artifacts go and which there are.
type Output struct {
	// BaseDir is the directory the artifact tree is written under (the
	// CLI's default for --dir).
	BaseDir string   `json:"base_dir,omitempty" yaml:"base_dir,omitempty" validate:"omitempty,max=1024,text"`
	Formats []string `json:"formats,omitempty" yaml:"formats,omitempty" validate:"max=3,dive,oneof=json csv html" msg:"fleetdoc.formats"`
}

// WantsFormat says whether the fleet's artifacts include format (all do
// when the manifest chooses none).
func (m Manifest) WantsFormat(format string) bool {
	return m.Output == nil || len(m.Output.Formats) == 0 || slices.Contains(m.Output.Formats, format)
}

// Scenario is what every target is asked to do once: a dataset under a
// load profile, sampling and scorer.
type Scenario struct {
	Name string `json:"name" yaml:"name" validate:"required,scenario_name" msg_required:"fleetdoc.give_name"`
	// Repository groups scenarios, as the fleet document's repositories
	// do; reports break the fleet down by it. Empty: no group.
	Repository string           `json:"repository,omitempty" yaml:"repository,omitempty" validate:"omitempty,scenario_name"`
	Dataset    bench.DatasetRef `json:"dataset" yaml:"dataset"`
	// The rest is checked as the benchmark manifest the scenario becomes
	// (Manifest.Validate), so their rules are not read here.
	Load          jobs.LoadProfile     `json:"load" yaml:"load" validate:"-"`
	Sampling      jobs.Sampling        `json:"sampling" yaml:"sampling" validate:"-"`
	Scorer        string               `json:"scorer,omitempty" yaml:"scorer,omitempty"`
	ScorerOptions *bench.ScorerOptions `json:"scorer_options,omitempty" yaml:"scorer_options,omitempty" validate:"-"`
	SLO           jobs.SLO             `json:"slo,omitempty" yaml:"slo,omitempty" validate:"-"`
}

// Target is a model on a runtime on a hardware profile. Written as a
// string "provider:model" it is a remote provider's model: Provider is
// set, Runtime is the provider's name (its runs are served by agents
// started with `agentd run --provider NAME`, see jobs.Providers) and
// Hardware the manifest's RemoteHardware.
type Target struct {
	Model    string `json:"model" yaml:"model" validate:"required,model_name"`
	Runtime  string `json:"runtime" yaml:"runtime" validate:"required,runtime"`
	Hardware string `json:"hardware" yaml:"hardware" validate:"required,hardware_slug"`
	// Provider is checked against the provider table by Manifest.Validate.
	Provider string `json:"-" yaml:"-"`
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
			return i18n.NewError("fleetdoc.target_string", "Line", n.Line, "Got", strconv.Quote(n.Value))
		}
		t.Provider, t.Model, t.Runtime = provider, model, provider
		return nil
	case yaml.MappingNode:
		// Decoding a node inside a custom unmarshaller does not check
		// for unknown fields: do it here.
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(targetKeys, k.Value) {
				return i18n.NewError("fleetdoc.target_field", "Line", k.Line, "Field", k.Value)
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
	return i18n.NewError("fleetdoc.target_kind", "Line", n.Line)
}

// UnmarshalJSON reads a target as MarshalJSON writes it (a stored
// manifest): a "provider:model" string or an object.
func (t *Target) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		provider, model, ok := strings.Cut(s, ":")
		if !ok || provider == "" {
			return fmt.Errorf("a target string is provider:model (got %q)", s)
		}
		*t = Target{Provider: provider, Model: model, Runtime: provider}
		return nil
	}
	type plain Target
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = Target(p)
	return nil
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

// Decode reads a fleet manifest in YAML or JSON (JSON is YAML), in
// Ruckus's dialect or in the fleet document's (a manifest with a
// fleet_id, see docManifest). Unknown fields are errors; remote targets
// get their hardware profile.
func Decode(r io.Reader) (Manifest, error) {
	var m Manifest
	b, err := io.ReadAll(io.LimitReader(r, MaxManifestBytes+1))
	if err != nil {
		return m, err
	}
	if isDocDialect(b) {
		var d docManifest
		if err := valid.ReadYAML(bytes.NewReader(b), MaxManifestBytes, "fleetdoc.the_manifest", &d); err != nil {
			return m, err
		}
		m = d.manifest()
	} else if err := valid.ReadYAML(bytes.NewReader(b), MaxManifestBytes, "fleetdoc.the_manifest", &m); err != nil {
		return m, err
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

// rules is the fleet manifest's validator: the benchmark manifest's
// rules (model names, runtimes) and the fleet's names. Built once and
// never changed after.
var rules = sync.OnceValue(func() *valid.Validator {
	return bench.NewRules().
		RegisterRule("fleet_name", "fleetdoc.fleet_name", fleetNamePattern.MatchString).
		RegisterRule("scenario_name", "fleetdoc.scenario_name_rule", scenarioNamePattern.MatchString).
		RegisterRule("hardware_slug", "fleetdoc.hardware_slug", hardwarePattern.MatchString)
})

// Validate is ValidateFor with the default provider table.
func (m Manifest) Validate() Errors { return m.ValidateFor(jobs.DefaultProviders()) }

// ValidateFor checks everything that needs no database: the fleet's own
// fields by their rules, its targets (remote ones against providers) and
// scenarios against each other, then each scenario as a benchmark
// manifest would be checked (its load, sampling, scorer and SLOs), with
// paths under scenarios[i]. A manifest in the fleet document's dialect
// gets its errors under that dialect's own paths.
func (m Manifest) ValidateFor(providers jobs.Providers) Errors {
	return m.docPaths(m.validate(providers))
}

func (m Manifest) validate(providers jobs.Providers) Errors {
	errs := m.validateFields()
	errs = append(errs, m.validateTargets(providers)...)
	errs = append(errs, m.validateScenarioNames()...)
	if n := len(m.Scenarios) * len(m.Targets); n > MaxRuns {
		errs.Say("targets", "fleetdoc.too_many_runs", "N", n, "Max", MaxRuns)
	}
	if !utf8.ValidString(m.Name) || len(m.Scenarios) > MaxScenarios || len(m.Targets) > MaxTargets {
		return errs
	}
	for i := range m.Scenarios {
		bm := m.benchManifest(i)
		// Anthropic's Messages API takes a temperature of 0–1, where
		// OpenAI's takes 0–2: every request of such a run would fail.
		if t := bm.Sampling.Temperature; t != nil && *t > 1 {
			for j, tg := range m.Targets {
				if p, ok := providers[tg.Provider]; ok && p.Dialect == jobs.DialectAnthropic {
					errs.Say(scenarioPath(i, "sampling.temperature"), "fleetdoc.anthropic_temperature", "T", strconv.FormatFloat(*t, 'g', -1, 64), "J", j, "Provider", tg.Provider, "Model", tg.Model)
					break
				}
			}
		}
		for _, e := range bm.Validate() {
			// The name and the targets are the fleet's, checked above.
			if e.Path == "name" || strings.HasPrefix(e.Path, "targets") {
				continue
			}
			e.Path = scenarioPath(i, e.Path)
			errs = append(errs, e)
		}
	}
	return errs
}

// validateFields: each field's own rules, its tags. A target of an
// unknown provider has no runtime; validateTargets says why.
func (m Manifest) validateFields() Errors {
	var errs Errors
	for _, e := range rules().Struct(m) {
		var i int
		if n, _ := fmt.Sscanf(e.Path, "targets[%d].runtime", &i); n == 1 && i < len(m.Targets) && m.Targets[i].Provider != "" {
			continue
		}
		errs = append(errs, e)
	}
	return errs
}

// validateTargets: remote providers that exist, and no target twice.
func (m Manifest) validateTargets(providers jobs.Providers) Errors {
	var errs Errors
	seen := map[string]int{}
	for i, t := range m.Targets {
		if _, ok := providers[t.Provider]; t.Provider != "" && !ok {
			errs.Say(fmt.Sprintf("targets[%d]", i), "fleetdoc.unknown_provider", "Provider", strconv.Quote(t.Provider), "List", strings.Join(providers.Names(), ", "))
		}
		if j, dup := seen[t.key()]; dup {
			errs.Say(fmt.Sprintf("targets[%d]", i), "manifest.same_target", "J", j)
		}
		seen[t.key()] = i
	}
	return errs
}

// validateScenarioNames: no two scenarios of a repository named alike
// (case aside).
func (m Manifest) validateScenarioNames() Errors {
	var errs Errors
	names := map[string]int{}
	for i, s := range m.Scenarios {
		key := strings.ToLower(s.Key())
		if j, dup := names[key]; dup && s.Name != "" {
			errs.Say(fmt.Sprintf("scenarios[%d].name", i), "fleetdoc.same_scenario_name", "J", j)
		}
		names[key] = i
	}
	return errs
}

// Key is the scenario's name within the fleet: repository/name, or the
// name alone outside any repository.
func (s Scenario) Key() string {
	if s.Repository == "" {
		return s.Name
	}
	return s.Repository + "/" + s.Name
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
	return bench.Manifest{Name: m.Name + " / " + s.Key(), Dataset: s.Dataset, Targets: targets, Load: s.Load,
		Sampling: s.Sampling, Scorer: s.Scorer, ScorerOptions: s.ScorerOptions, SLO: s.SLO}
}
