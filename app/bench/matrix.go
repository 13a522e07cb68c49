package bench

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// MaxConfigurations bounds the configurations a benchmark's matrices
// expand to, over all its targets: each is at least one run, and a matrix
// grows as the product of its lists, so a few short lists already make
// many runs (docs/benchmarks.md#configuration-matrix).
const MaxConfigurations = 64

// Configuration is one target of a manifest as it will run: a target
// without a matrix as it is, or one combination of a target's matrix with
// the values merged into its engine settings.
type Configuration struct {
	Target Target
	// Index is the manifest's target it comes from, Path that target's
	// path ("targets[1]").
	Index int
	Path  string
	// From is, per matrix setting, the index of its value in the matrix's
	// list: a refusal of the value names targets[i].matrix.NAME[j].
	From map[string]int
}

// matrixNames are t's matrix settings, sorted: the order combinations
// are listed in (the last name varies fastest).
func (t Target) matrixNames() []string {
	return slices.Sorted(maps.Keys(t.Matrix))
}

// matrixSize is how many configurations t's matrix makes (1 without
// one), counted no further than limit+1 so a product cannot overflow.
func (t Target) matrixSize(limit int) int {
	n := 1
	for _, name := range t.matrixNames() {
		n *= len(t.Matrix[name])
		if n > limit {
			return limit + 1
		}
	}
	return n
}

// configurations expands t (the manifest's target i) over its matrix.
func (t Target) configurations(i int) []Configuration {
	path := fmt.Sprintf("targets[%d]", i)
	base := t
	base.Matrix = nil
	out := []Configuration{{Target: base, Index: i, Path: path}}
	for _, name := range t.matrixNames() {
		var next []Configuration
		for _, c := range out {
			for j, v := range t.Matrix[name] {
				engine := maps.Clone(c.Target.Engine)
				if engine == nil {
					engine = map[string]any{}
				}
				engine[name] = v
				from := maps.Clone(c.From)
				if from == nil {
					from = map[string]int{}
				}
				from[name] = j
				tc := c.Target
				tc.Engine = engine
				next = append(next, Configuration{Target: tc, Index: i, Path: path, From: from})
			}
		}
		out = next
	}
	return out
}

// Configurations are m's targets expanded over their matrices, in the
// targets' order. Call it on a manifest whose matrices Validate accepted.
func (m Manifest) Configurations() []Configuration {
	var out []Configuration
	for i, t := range m.Targets {
		out = append(out, t.configurations(i)...)
	}
	return out
}

// settingPath is where a refused engine setting of c is named: in its
// matrix when the value came from there, else in its engine.
func (c Configuration) settingPath(name string) string {
	if j, ok := c.From[name]; ok {
		return fmt.Sprintf("%s.matrix.%s[%d]", c.Path, name, j)
	}
	return c.Path + ".engine." + name
}

// settingErrors are c's refused engine settings, each at its path.
func (c Configuration) settingErrors(faults []jobs.EngineFault) Errors {
	var errs Errors
	for _, f := range faults {
		errs = append(errs, valid.FromError(c.settingPath(f.Name), f.Err))
	}
	return errs
}

// checkMatrix checks the matrix of t at path: each value against the
// runtime's allow-list exactly as an engine setting (gpus as in
// CheckEngine), no empty list, no value twice in a list, no setting both
// fixed and in the matrix, and at most MaxConfigurations combinations.
func checkMatrix(path string, t Target, gpus int) Errors {
	var errs Errors
	for _, name := range t.matrixNames() {
		list := t.Matrix[name]
		at := path + ".matrix." + name
		if _, fixed := t.Engine[name]; fixed {
			errs.Say(at, "manifest.matrix_and_engine", "Name", name)
		}
		if len(list) == 0 {
			errs.Say(at, "manifest.matrix_empty", "Name", name)
		}
		seen := map[string]int{}
		for j, v := range list {
			checked, faults := jobs.CheckEngine(t.Runtime, map[string]any{name: v}, gpus)
			for _, f := range faults {
				errs = append(errs, valid.FromError(fmt.Sprintf("%s[%d]", at, j), f.Err))
			}
			if len(faults) > 0 {
				continue
			}
			if k, dup := seen[checked[name]]; dup {
				errs.Say(fmt.Sprintf("%s[%d]", at, j), "manifest.matrix_same", "Name", name, "J", k)
			}
			seen[checked[name]] = j
		}
	}
	if n := t.matrixSize(MaxConfigurations); n > MaxConfigurations {
		errs.Say(path+".matrix", "manifest.matrix_too_many", "Max", MaxConfigurations)
	}
	return errs
}

// countConfigurations is how many configurations m's targets make, at
// most MaxConfigurations+1.
func (m Manifest) countConfigurations() int {
	n := 0
	for _, t := range m.Targets {
		n += t.matrixSize(MaxConfigurations)
		if n > MaxConfigurations {
			return MaxConfigurations + 1
		}
	}
	return n
}
