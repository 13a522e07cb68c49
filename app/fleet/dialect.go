package fleet

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/jobs"
)

// The fleet benchmarking document (docs/fleets.md#the-fleet-documents-dialect)
// writes its manifests in a dialect of its own:
//
//	fleet_id, version, description,
//	repositories: [{repo_id, path, adapter, scenarios: [name…]}],
//	providers: ["openai:gpt-4", "anthropic:claude-3-opus"],
//	scenario_profiles: {name: {dataset, concurrency, num_examples}},
//	output: {base_dir, formats}
//
// Ruckus reads it as written. Each repository becomes a group of
// scenarios; each of its scenario names becomes a scenario whose profile
// is scenario_profiles[name] (dataset, concurrency → a concurrency load,
// num_examples → max requests) or, without one, the native adapter's
// convention: the dataset named after the scenario, one request at a time,
// every item. Providers become the targets (a mapping {model, runtime,
// hardware} is accepted beside the strings, for self-hosted targets).
// Ruckus adds max_tokens, temperature and scorer to a profile, and
// remote_hardware to the manifest; nothing else is accepted.

// docManifest is the document's manifest.
type docManifest struct {
	FleetID          string                `yaml:"fleet_id"`
	Version          string                `yaml:"version"`
	Description      string                `yaml:"description"`
	Repositories     []docRepository       `yaml:"repositories"`
	Providers        []Target              `yaml:"providers"`
	ScenarioProfiles map[string]docProfile `yaml:"scenario_profiles"`
	Output           *Output               `yaml:"output"`
	RemoteHardware   string                `yaml:"remote_hardware"`

	// refs says where each fleet scenario came from; errs are the
	// dialect's own errors, found while translating.
	refs []docRef
	errs Errors
}

type docRepository struct {
	RepoID    string   `yaml:"repo_id"`
	Path      string   `yaml:"path"`
	Adapter   string   `yaml:"adapter"`
	Scenarios []string `yaml:"scenarios"`
}

type docProfile struct {
	Dataset     string   `yaml:"dataset"`
	Concurrency int      `yaml:"concurrency"`
	NumExamples int      `yaml:"num_examples"`
	MaxTokens   int      `yaml:"max_tokens"`
	Temperature *float64 `yaml:"temperature"`
	Scorer      string   `yaml:"scorer"`
}

// docRef is the origin of a fleet scenario: repositories[repo].scenarios[scenario],
// with its profile's name when scenario_profiles has one.
type docRef struct {
	repo, scenario int
	profile        string
}

// Adapters are the repository adapters Ruckus has.
var Adapters = []string{"native"}

// DocMaxTokens is the answer length a scenario profile asks for when it
// does not set max_tokens (the document's profiles have no such field,
// and a request without one may generate without end).
const DocMaxTokens = 512

// isDocDialect says whether a manifest is in the document's dialect: its
// top-level mapping has fleet_id, repositories or scenario_profiles.
func isDocDialect(b []byte) bool {
	var top map[string]yaml.Node
	if yaml.NewDecoder(bytes.NewReader(b)).Decode(&top) != nil {
		return false
	}
	for _, k := range []string{"fleet_id", "repositories", "scenario_profiles"} {
		if _, ok := top[k]; ok {
			return true
		}
	}
	return false
}

// okPath says whether a repository's path is fit to keep: at most 1024
// bytes of UTF-8 without control characters. It is kept as the team's
// note; Ruckus reads nothing from it.
func okPath(p string) bool {
	return len(p) <= 1024 && utf8.ValidString(p) && !strings.ContainsFunc(p, unicode.IsControl)
}

// manifest translates d into Ruckus's manifest, keeping what the
// dialect's own checks found in d.errs.
func (d *docManifest) manifest() Manifest {
	m := Manifest{Name: d.FleetID, Version: d.Version, Description: d.Description, Targets: d.Providers,
		Output: d.Output, RemoteHardware: d.RemoteHardware, doc: d}
	if len(d.Repositories) == 0 {
		d.errs.Say("repositories", "fleetdoc.add_repository")
	}
	if len(d.Providers) == 0 {
		d.errs.Say("providers", "fleetdoc.add_provider")
	}
	repos := map[string]int{}
	for r, repo := range d.Repositories {
		path := fmt.Sprintf("repositories[%d]", r)
		if j, dup := repos[repo.RepoID]; dup && repo.RepoID != "" {
			d.errs.Say(path+".repo_id", "fleetdoc.same_repo_id", "J", j)
		}
		repos[repo.RepoID] = r
		if repo.RepoID == "" {
			d.errs.Say(path+".repo_id", "fleetdoc.repo_id")
		}
		if repo.Adapter != "" && !slices.Contains(Adapters, repo.Adapter) {
			d.errs.Say(path+".adapter", "fleetdoc.adapter", "Adapter", strconv.Quote(shortened(repo.Adapter)), "List", strings.Join(Adapters, ", "))
		}
		if !okPath(repo.Path) {
			d.errs.Say(path+".path", "fleetdoc.path")
		}
		if len(repo.Scenarios) == 0 {
			d.errs.Say(path+".scenarios", "fleetdoc.list_scenario")
		}
		for s, name := range repo.Scenarios {
			sc := Scenario{Name: name, Repository: repo.RepoID, Dataset: bench.DatasetRef{Name: name},
				Load: jobs.LoadProfile{Profile: jobs.LoadSequential}, Sampling: jobs.Sampling{MaxTokens: DocMaxTokens}}
			ref := docRef{repo: r, scenario: s}
			if p, ok := d.ScenarioProfiles[name]; ok {
				ref.profile = name
				if p.Dataset != "" {
					sc.Dataset = bench.DatasetRef{Name: p.Dataset}
				}
				if p.Concurrency != 0 {
					sc.Load = jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: p.Concurrency}
				}
				sc.Load.MaxRequests = p.NumExamples
				if p.MaxTokens != 0 {
					sc.Sampling.MaxTokens = p.MaxTokens
				}
				sc.Sampling.Temperature, sc.Scorer = p.Temperature, p.Scorer
			}
			m.Scenarios = append(m.Scenarios, sc)
			d.refs = append(d.refs, ref)
		}
	}
	listed := map[string]bool{}
	for _, repo := range d.Repositories {
		for _, name := range repo.Scenarios {
			listed[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.ScenarioProfiles)) {
		switch {
		case !scenarioNamePattern.MatchString(name):
			d.errs.Say("scenario_profiles."+shortened(name), "fleetdoc.scenario_name")
		case !listed[name]:
			d.errs.Say("scenario_profiles."+name, "fleetdoc.unlisted_profile", "Name", strconv.Quote(name))
		}
	}
	return m
}

// shortened is a value as an error message quotes it back: its first 64
// bytes and "…" when it is longer.
func shortened(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// docPaths gives errors found on a manifest in the document's dialect
// under that dialect's own paths, with the dialect's own errors first and
// each error once; errors of a manifest in Ruckus's dialect are returned
// as they are.
func (m Manifest) docPaths(errs Errors) Errors {
	d := m.doc
	if d == nil {
		return errs
	}
	out := append(Errors{}, d.errs...)
	type pathMessage struct{ path, message string }
	seen := map[pathMessage]bool{}
	for _, e := range d.errs {
		seen[pathMessage{e.Path, e.Message}] = true
	}
	for _, e := range errs {
		e.Path = d.path(e.Path)
		if !seen[pathMessage{e.Path, e.Message}] {
			seen[pathMessage{e.Path, e.Message}] = true
			out = append(out, e)
		}
	}
	return out
}

// scenarioFields maps a fleet scenario's field to its profile's.
var scenarioFields = map[string]string{
	"dataset":              "dataset",
	"load.concurrency":     "concurrency",
	"load.max_requests":    "num_examples",
	"sampling.max_tokens":  "max_tokens",
	"sampling.temperature": "temperature",
	"scorer":               "scorer",
}

// path is a Ruckus manifest path as the document's dialect writes it.
func (d *docManifest) path(p string) string {
	switch {
	case p == "name":
		return "fleet_id"
	case p == "targets":
		return "providers"
	case strings.HasPrefix(p, "targets["):
		return "providers" + strings.TrimPrefix(p, "targets")
	case !strings.HasPrefix(p, "scenarios["):
		return p
	}
	var i int
	if n, _ := fmt.Sscanf(p, "scenarios[%d]", &i); n != 1 || i < 0 || i >= len(d.refs) {
		return "repositories"
	}
	ref := d.refs[i]
	field := strings.TrimPrefix(strings.TrimPrefix(p, fmt.Sprintf("scenarios[%d]", i)), ".")
	own := fmt.Sprintf("repositories[%d].scenarios[%d]", ref.repo, ref.scenario)
	switch {
	case field == "repository":
		return fmt.Sprintf("repositories[%d].repo_id", ref.repo)
	case ref.profile == "":
		return own
	}
	prof := "scenario_profiles." + ref.profile
	if f, ok := scenarioFields[field]; ok {
		return prof + "." + f
	}
	if field == "name" {
		return own
	}
	return prof
}
