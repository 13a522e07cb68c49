package benchmarks

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// TargetRow is one target row of the form as typed. Index names its
// fields (target_{Index}_model …): rows come and go, so indices may have
// gaps. Path is the manifest path errors about it carry ("targets[k]",
// k counting only the rows filled in), "" for an empty row.
type TargetRow struct {
	Index                    int
	Path                     string
	Model, Runtime, Hardware string
	// Engine is the row's engine settings as typed, name to text, for the
	// runtime's parameters (jobs.EngineParamsOf); "" keeps its default.
	Engine map[string]string
	// Matrix is the row's matrix as typed ("max_num_seqs=64,128;
	// tensor_parallel_size=1,2"; jobs.ParseMatrixText), "" for none.
	Matrix string
}

// Empty reports whether nothing was chosen in the row.
func (t TargetRow) Empty() bool { return t.Model == "" && t.Runtime == "" && t.Hardware == "" }

// MaxTargetRows bounds the rows the form reads (the manifest allows 50
// targets).
const MaxTargetRows = 50

// Form is the create form as typed.
type Form struct {
	Name                                       string
	DatasetID                                  string
	Targets                                    []TargetRow
	Preset                                     string // the load preset last applied
	LoadKind, Concurrency, Rate, Steps, Warmup string
	MaxRequests, MaxDuration, MaxErrors        string
	// LengthsInput and LengthsOutput are a length sweep's lengths as
	// typed: token counts separated by commas.
	LengthsInput, LengthsOutput              string
	Repeats                                  string
	Temperature, TopP, MaxTokens, Seed, Stop string
	Scorer, SLOTTFT, SLOTPOT, SLOE2E         string
	// Samples is sampling.n: answers per item, for pass@k.
	Samples string
	// ScorerPattern and ScorerSchema are the scorer's options as typed
	// (regex's pattern, json-schema's schema).
	ScorerPattern, ScorerSchema string
	// FewShotK is the few-shot k as typed: one number, or several
	// separated by commas ("0,5": every target once at each);
	// FewShotSeed the sampler's seed ("" for lm-eval's 1234).
	FewShotK, FewShotSeed string
}

// NextTarget is the index for a new row.
func (f Form) NextTarget() int {
	n := 0
	for _, t := range f.Targets {
		n = max(n, t.Index+1)
	}
	return n
}

// Choices are what the form offers.
type Choices struct {
	Datasets []store.Dataset
	Models   []store.Model
	Hardware []store.HardwareProfile
}

// Estimate is what a preview expects the benchmark to cost in requests and
// time.
type Estimate struct {
	// Requests is over all runs; PerRun for each.
	Requests, PerRun int
	// Low and High bound one run's duration.
	Low, High time.Duration
	// Basis says what the range assumes.
	Basis string
}

// runRange is a planned run's own estimated duration.
func runRange(r bench.PlannedRun) string {
	return Estimate{Low: seconds(r.EstimateLow), High: seconds(r.EstimateHigh)}.Range()
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// engineLabel is a run's engine settings, or the runtime's defaults.
func engineLabel(ctx context.Context, e jobs.Engine) string {
	if len(e) == 0 {
		return i18n.T(ctx, "newbench.engine_default")
	}
	return e.Key()
}

// Range formats the duration range.
func (e Estimate) Range() string {
	return roundDuration(e.Low) + " – " + roundDuration(e.High)
}

func roundDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Minute).String()
	}
	return d.Round(10 * time.Minute).String()
}

// NewData is the create page.
type NewData struct {
	Form     Form
	Choices  Choices
	Errors   bench.Errors
	Plan     []bench.PlannedRun
	Estimate Estimate
	// Search is a budgeted search's schedule (nil without one); Plan is
	// then its first rung, every configuration once.
	Search *conclude.SearchPlan
}

// Preset is a named load profile that fills the load fields. Label and
// Hint are catalogue keys (app/i18n).
type Preset struct {
	Key, Label, Hint string
	apply            func(*Form)
}

// Presets are the load profiles offered by name.
var Presets = []Preset{
	{Key: "quick", Label: "newbench.preset_quick", Hint: "newbench.preset_quick_hint",
		apply: func(f *Form) { f.LoadKind, f.MaxRequests = "sequential", "20" }},
	{Key: "latency", Label: "newbench.preset_latency", Hint: "newbench.preset_latency_hint",
		apply: func(f *Form) { f.LoadKind, f.Concurrency, f.Warmup = "concurrency", "1", "5" }},
	{Key: "sweep", Label: "newbench.preset_sweep", Hint: "newbench.preset_sweep_hint",
		apply: func(f *Form) { f.LoadKind, f.Concurrency, f.Steps, f.Warmup = "sweep", "32", "4", "5" }},
}

func presetByKey(key string) (Preset, bool) {
	for _, p := range Presets {
		if p.Key == key {
			return p, true
		}
	}
	return Preset{}, false
}

// ApplyPreset fills the load fields from the preset named key (clearing
// the others, so nothing of an earlier profile lingers); false when there
// is no such preset.
func (f *Form) ApplyPreset(key string) bool {
	p, ok := presetByKey(key)
	if !ok {
		return false
	}
	f.Concurrency, f.Rate, f.Steps, f.Warmup, f.MaxRequests, f.MaxDuration, f.MaxErrors = "", "", "", "", "", "", ""
	f.LengthsInput, f.LengthsOutput = "", ""
	p.apply(f)
	f.Preset = key
	return true
}

// MemoryNeedGB is what a model needs: its registry figure, else the
// estimate from its size and quantisation.
func MemoryNeedGB(m store.Model) float64 {
	if m.MemoryGB != nil {
		return *m.MemoryGB
	}
	return conclude.EstimateMemoryGB(m.ParamsB, m.Quantization)
}

// modelLabel names a model in the target row's choice: its name, size
// ("8B fp8", as model names write it) and the memory it needs.
func modelLabel(ctx context.Context, m store.Model) string {
	size := i18n.T(ctx, "newbench.size_unknown")
	if m.ParamsB > 0 {
		size = strconv.FormatFloat(m.ParamsB, 'f', -1, 64) + "B"
		if m.Quantization != "" {
			size += " " + m.Quantization
		}
	}
	return i18n.T(ctx, "newbench.model_option", "Name", m.Name, "Size", size, "GB", i18n.Num(ctx, MemoryNeedGB(m), 1))
}

func hardwareLabel(ctx context.Context, h store.HardwareProfile) string {
	if h.GPUCount == 0 {
		return i18n.T(ctx, "newbench.cpu_option", "Slug", h.Slug, "Cores", i18n.Int(ctx, int64(h.CPUCores)))
	}
	return fmt.Sprintf("%s (%d× %s, %s GB)", h.Slug, h.GPUCount, orDash(h.GPUName), i18n.Num(ctx, capacityGB(h), 0))
}

func capacityGB(h store.HardwareProfile) float64 {
	return float64(h.GPUCount) * float64(h.GPUMemoryBytes) / 1e9
}

// tooSmall says why the row's model cannot be served on h ("" when it
// can), as the benchmark service checks it: GPU memory against the model's need,
// except on the simulated runtime, which loads nothing.
func tooSmall(ctx context.Context, t TargetRow, ch Choices, h store.HardwareProfile) string {
	if t.Model == "" || t.Runtime == "sim" || h.GPUCount == 0 {
		return ""
	}
	for _, m := range ch.Models {
		if m.Name == t.Model {
			if need, has := MemoryNeedGB(m), capacityGB(h); need > has {
				return i18n.T(ctx, "newbench.too_small", "Need", i18n.Num(ctx, need, 1), "Has", i18n.Num(ctx, has, 0))
			}
		}
	}
	return ""
}

// invalid marks the field at path aria-invalid when an error is about
// it; a valid field carries no mark (not "false", which styles it as
// checked and correct before anyone has typed).
func invalid(errs bench.Errors, path string) templ.Attributes {
	for _, e := range errs {
		if e.Path == path {
			return templ.Attributes{"aria-invalid": "true"}
		}
	}
	return templ.Attributes{}
}

func oobAttrs(oob bool) templ.Attributes {
	if oob {
		return templ.Attributes{"hx-swap-oob": "true"}
	}
	return templ.Attributes{}
}

// FewShotLabel names a run's prompts: "0-shot" (the dataset's own), or
// "5-shot, seed 1234".
func FewShotLabel(ctx context.Context, k int, seed int64, exemplars string) string {
	switch {
	case k <= 0:
		return i18n.T(ctx, "newbench.fewshot_zero")
	case exemplars != "":
		return i18n.T(ctx, "newbench.fewshot_exemplars_label", "K", strconv.Itoa(k), "Set", exemplars)
	}
	return i18n.T(ctx, "newbench.fewshot_label", "K", strconv.Itoa(k), "Seed", strconv.FormatInt(seed, 10))
}

// engineStep is a number field's step: whole numbers for an int setting.
func engineStep(p jobs.EngineParam) string {
	if p.Kind == jobs.EngineInt {
		return "1"
	}
	return "any"
}

// engineChoices are a choice setting's values: an enum's, or a bool's.
func engineChoices(p jobs.EngineParam) []string {
	if p.Kind == jobs.EngineBool {
		return []string{"true", "false"}
	}
	return p.Choices
}
