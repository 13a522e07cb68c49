package benchmarks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// ReadForm reads the create form as typed. get reads a field (the
// handler's FormValue), has tells whether the form carries it at all.
func ReadForm(get func(string) string, has func(string) bool) Form {
	v := func(k string) string { return strings.TrimSpace(get(k)) }
	f := Form{
		Name: v("name"), DatasetID: v("dataset_id"), LoadKind: v("load_kind"), Concurrency: v("concurrency"),
		Rate: v("rate"), Steps: v("steps"), Warmup: v("warmup"), MaxRequests: v("max_requests"),
		MaxDuration: v("max_duration"), MaxErrors: v("max_errors"), Temperature: v("temperature"), TopP: v("top_p"),
		MaxTokens: v("max_tokens"), Seed: v("seed"), Stop: get("stop"), Scorer: v("scorer"), Samples: v("n"),
		SLOTTFT: v("slo_ttft"), SLOTPOT: v("slo_tpot"), SLOE2E: v("slo_e2e"), Repeats: v("repeats"),
		FewShotK: v("fewshot_k"), FewShotSeed: v("fewshot_seed"),
		LengthsInput: v("lengths_input"), LengthsOutput: v("lengths_output"),
	}
	// Only the picked scorer's options are read: a field left from another
	// scorer is not an error.
	switch f.Scorer {
	case "regex":
		f.ScorerPattern = strings.Clone(get("scorer_pattern"))
	case "json-schema":
		f.ScorerSchema = strings.Clone(strings.TrimSpace(get("scorer_schema")))
	}
	f.Targets = ReadTargetRows(get, has)
	return f
}

// ReadTargetRows reads the target rows the form holds (indices with gaps,
// as rows come and go), in index order. get reads a field, has tells
// whether the form carries it at all.
func ReadTargetRows(get func(string) string, has func(string) bool) []TargetRow {
	var rows []TargetRow
	for i := range MaxTargetRows {
		k := func(f string) string { return fmt.Sprintf("target_%d_%s", i, f) }
		if !has(k("model")) && !has(k("runtime")) && !has(k("hardware")) {
			continue
		}
		field := func(f string) string { return valid.Field(strings.TrimSpace(get(k(f)))) }
		row := TargetRow{Index: i, Model: field("model"), Runtime: field("runtime"), Hardware: field("hardware")}
		// Only the fields of the row's runtime's parameters are read: a
		// name the table lacks never becomes a setting.
		for _, p := range jobs.EngineParamsOf(row.Runtime) {
			if v := field("engine_" + p.Name); v != "" {
				if row.Engine == nil {
					row.Engine = map[string]string{}
				}
				row.Engine[p.Name] = v
			}
		}
		row.Matrix = field("matrix")
		rows = append(rows, row)
	}
	return rows
}

// Manifest turns the form into a manifest; numbers that do not parse
// become errors at the manifest path they belong to. It numbers the
// filled-in target rows (their Path) as it goes.
func (f *Form) Manifest() (bench.Manifest, bench.Errors) {
	var p formNumbers
	m := bench.Manifest{Name: f.Name, Scorer: f.Scorer, Load: jobs.LoadProfile{Profile: f.LoadKind}}
	m.ScorerOptions = f.scorerOptions()
	if f.DatasetID != "" {
		id, ok := rowID(f.DatasetID)
		if !ok {
			p.bad("dataset", "form_err.choose_dataset")
		}
		m.Dataset.ID = id
	}
	m.Targets = f.manifestTargets(&p)
	m.FewShot, m.Targets = p.fewShot(f.FewShotK, f.FewShotSeed, m.Targets)
	p.load(f, &m.Load)
	p.integer(f.Repeats, "repeats", &m.Repeats)
	p.sampling(f, &m.Sampling)
	p.duration(f.SLOTTFT, "slo.ttft", &m.SLO.TTFT)
	p.duration(f.SLOTPOT, "slo.tpot", &m.SLO.TPOT)
	p.duration(f.SLOE2E, "slo.e2e", &m.SLO.E2E)
	return m, p.errs
}

// rowID reads a row id as the handlers' paths take one: digits only, from
// 1 to 2⁶³−1; 0 and false otherwise.
func rowID(s string) (int64, bool) {
	if s == "" || len(s) > 19 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// scorerOptions are the picked scorer's options, nil when it has none.
func (f *Form) scorerOptions() *bench.ScorerOptions {
	switch f.Scorer {
	case "regex":
		if f.ScorerPattern != "" {
			return &bench.ScorerOptions{Pattern: f.ScorerPattern}
		}
	case "json-schema":
		return &bench.ScorerOptions{Schema: bench.JSONDoc(f.ScorerSchema)}
	}
	return nil
}

// manifestTargets are the filled-in target rows, each row told its path;
// a matrix that does not parse is an error at its path.
func (f *Form) manifestTargets(p *formNumbers) []bench.Target {
	var targets []bench.Target
	for i, t := range f.Targets {
		if !t.Empty() {
			f.Targets[i].Path = fmt.Sprintf("targets[%d]", len(targets))
			bt := bench.Target{Model: t.Model, Runtime: t.Runtime, Hardware: t.Hardware}
			for name, v := range t.Engine {
				if bt.Engine == nil {
					bt.Engine = map[string]any{}
				}
				bt.Engine[name] = v
			}
			if t.Matrix != "" {
				matrix, err := jobs.ParseMatrixText(t.Matrix)
				if err != nil {
					p.errs = append(p.errs, valid.FromError(f.Targets[i].Path+".matrix", err))
				}
				bt.Matrix = matrix
			}
			targets = append(targets, bt)
		}
	}
	return targets
}

// formNumbers parses the form's numbers, gathering what does not parse.
type formNumbers struct {
	errs bench.Errors
}

// bad notes that path's value is wrong, as the catalogue's key says.
func (p *formNumbers) bad(path, key string, args ...any) {
	p.errs = append(p.errs, valid.E(path, key, args...))
}

func (p *formNumbers) integer(s, path string, dst *int) {
	if s == "" {
		return
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		p.bad(path, "form_err.not_whole", "Value", fmt.Sprintf("%q", s))
	}
	*dst = n
}

func (p *formNumbers) decimal(s, path string) *float64 {
	if s == "" {
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		p.bad(path, "form_err.not_number", "Value", fmt.Sprintf("%q", s))
		return nil
	}
	return &x
}

func (p *formNumbers) duration(s, path string, dst *jobs.Duration) {
	if s == "" {
		return
	}
	if err := dst.UnmarshalText([]byte(s)); err != nil {
		p.errs = append(p.errs, valid.FromError(path, err))
	}
}

// fewShot is the manifest's few-shot setting for one k; for several,
// every target once at each k, side by side in one benchmark.
func (p *formNumbers) fewShot(k, seed string, targets []bench.Target) (*bench.FewShot, []bench.Target) {
	fs, errs := bench.ParseFewShot(k, seed)
	switch {
	case len(errs) > 0:
		p.errs = append(p.errs, errs...)
		return nil, targets
	case len(fs) == 1:
		return &fs[0], targets
	case len(fs) > 1:
		var each []bench.Target
		for _, t := range targets {
			for i := range fs {
				t.FewShot = &fs[i]
				each = append(each, t)
			}
		}
		return nil, each
	}
	return nil, targets
}

func (p *formNumbers) load(f *Form, l *jobs.LoadProfile) {
	p.integer(f.Concurrency, "load.concurrency", &l.Concurrency)
	if r := p.decimal(f.Rate, "load.rate"); r != nil {
		l.Rate = *r
	}
	p.integer(f.Steps, "load.steps", &l.Steps)
	if f.LengthsInput != "" || f.LengthsOutput != "" {
		in, inErrs := bench.ParseLengths(f.LengthsInput, "load.lengths.input")
		out, outErrs := bench.ParseLengths(f.LengthsOutput, "load.lengths.output")
		p.errs = append(append(p.errs, inErrs...), outErrs...)
		l.Lengths = &jobs.Lengths{Input: in, Output: out}
	}
	p.integer(f.Warmup, "load.warmup", &l.Warmup)
	p.integer(f.MaxRequests, "load.max_requests", &l.MaxRequests)
	p.duration(f.MaxDuration, "load.max_duration", &l.MaxDuration)
	p.integer(f.MaxErrors, "load.max_errors", &l.MaxErrors)
}

func (p *formNumbers) sampling(f *Form, s *jobs.Sampling) {
	s.Temperature = p.decimal(f.Temperature, "sampling.temperature")
	s.TopP = p.decimal(f.TopP, "sampling.top_p")
	p.integer(f.MaxTokens, "sampling.max_tokens", &s.MaxTokens)
	p.integer(f.Samples, "sampling.n", &s.N)
	if f.Seed != "" {
		seed, err := strconv.ParseInt(f.Seed, 10, 64)
		if err != nil {
			p.bad("sampling.seed", "form_err.not_whole", "Value", fmt.Sprintf("%q", f.Seed))
		}
		s.Seed = &seed
	}
	for _, line := range strings.Split(strings.ReplaceAll(f.Stop, "\r\n", "\n"), "\n") {
		if line != "" {
			s.Stop = append(s.Stop, line)
		}
	}
}
