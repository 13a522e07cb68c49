package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// QuickStart is the shortest request for a benchmark: a model and a
// dataset, each by id or by name, as the Benchmark Runner's API takes
// them ({"model_id": …, "dataset_id": …}). The benchmark service fills in the rest
// from what exists (see Service.QuickStart).
type QuickStart struct {
	Model   Ref    `json:"model_id" validate:"required,ref" msg_required:"manifest.ref_required"`
	Dataset Ref    `json:"dataset_id" validate:"required,ref" msg_required:"manifest.ref_required"`
	Name    string `json:"name" validate:"omitempty,maxbytes=200,text" msg_maxbytes:"manifest.name_200_bytes"`
}

// Ref names a row by id (a JSON number) or by name (a JSON string).
type Ref struct {
	ID   int64
	Name string
}

func (r Ref) String() string {
	if r.ID > 0 {
		return fmt.Sprint(r.ID)
	}
	return fmt.Sprintf("%q", r.Name)
}

// errRefType is what a Ref that is neither a number nor a string gets.
var errRefType = errors.New("an id (a whole number) or a name (a string)")

// UnmarshalJSON reads a whole number as the id and a string as the name.
func (r *Ref) UnmarshalJSON(b []byte) error {
	*r = Ref{}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &r.Name)
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errRefType
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < 1 || f > math.MaxInt64 {
		return errRefType
	}
	id, err := n.Int64()
	if err != nil {
		// 3e0 is a whole number too; beyond 2⁵³ only digits are exact.
		if f > 1<<53 {
			return errRefType
		}
		id = int64(f)
	}
	r.ID = id
	return nil
}

// MaxQuickStartBytes bounds a quick-start body.
const MaxQuickStartBytes = 4096

// IsQuickStart says whether a create request's body is a QuickStart (a
// JSON object with a model_id) rather than a manifest.
func IsQuickStart(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(body, &keys) != nil {
		return false
	}
	_, ok := keys["model_id"]
	return ok
}

// quickStartValidator is built once, on first use, and never changed
// after: a validator caches what it learns of a struct, which is the
// expensive part.
var quickStartValidator = sync.OnceValue(func() *valid.Validator {
	return valid.New("json").
		// A Ref is validated as its id when it has one, else as its name.
		RegisterCustomType(func(f reflect.Value) any {
			r := f.Interface().(Ref)
			if r.ID > 0 {
				return r.ID
			}
			return r.Name
		}, Ref{}).
		RegisterValueRule("ref", "manifest.ref", func(f reflect.Value) bool {
			if f.Kind() == reflect.Int64 {
				return f.Int() > 0
			}
			s := f.String()
			return strings.TrimSpace(s) != "" && len(s) <= 200 && dataset.IsText(s)
		})
})

// DecodeQuickStart reads a QuickStart from JSON. Unknown fields are
// errors; every error names its field.
func DecodeQuickStart(r io.Reader) (QuickStart, error) {
	var qs QuickStart
	b, err := io.ReadAll(io.LimitReader(r, MaxQuickStartBytes+1))
	if err != nil {
		return qs, err
	}
	if len(b) > MaxQuickStartBytes {
		return qs, Errors{valid.E("", "manifest.request_too_large", "Limit", MaxQuickStartBytes)}
	}
	if errs := valid.DecodeJSON(b, &qs); errs != nil {
		if len(errs) == 1 && errs[0].Path == "" && errs[0].Message == errRefType.Error() {
			// The decoder does not say which field a Ref's own error is
			// about: find it.
			errs[0] = valid.E(badRefField(b), "manifest.ref_type")
		}
		return qs, errs
	}
	if errs := quickStartValidator().Struct(qs); errs != nil {
		return qs, errs
	}
	return qs, nil
}

// badRefField is the first of model_id and dataset_id whose value is not
// a valid Ref.
func badRefField(b []byte) string {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	for _, k := range []string{"model_id", "dataset_id"} {
		var r Ref
		if v, ok := raw[k]; ok && r.UnmarshalJSON(v) != nil {
			return k
		}
	}
	return ""
}

// Quick-start defaults: the new-benchmark form's own (every item, one
// request at a time, temperature 0), and max_tokens for the items that do
// not set their own.
const (
	QuickStartMaxTokens = 256
)

// QuickStart turns a quick start into a full manifest, choosing what it
// leaves out from what exists:
//   - the target: a hardware profile and runtime that a live agent serves
//     now (online, heartbeating within StaleAfter, not drained or
//     deactivated, of this protocol version) and that can load the model
//     (enough GPU memory, or no GPU limit: a CPU profile or the simulated
//     runtime), a real runtime before the simulated one, then by profile
//     and runtime name; never a remote provider's (openai, anthropic, a
//     provider of the table) unless an administrator priced the model
//     there (Admin → Providers): a provider serves its own models, and
//     which those are only that table says;
//   - the load: sequential, every item (the form's default);
//   - sampling: temperature 0 and max_tokens QuickStartMaxTokens, which
//     applies only to items that set no max_tokens of their own;
//   - the scorer: the dataset's default scorer;
//   - the name: "<model> on <dataset>" unless given.
//
// When no live agent can serve the model, the error names the model and
// what is missing.
func (p *Service) QuickStart(ctx context.Context, v store.Viewer, qs QuickStart) (Manifest, error) {
	var m Manifest
	var model store.Model
	var err error
	if qs.Model.ID > 0 {
		model, err = p.Store.ModelByID(ctx, qs.Model.ID)
	} else {
		model, err = p.Store.ModelByName(ctx, qs.Model.Name)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && model.RetiredAt != nil) {
		return m, Errors{valid.E("model_id", "manifest.no_model", "Model", fmt.Sprint(qs.Model))}
	}
	if err != nil {
		return m, err
	}
	var ds store.Dataset
	if qs.Dataset.ID > 0 {
		ds, err = p.Store.DatasetByID(ctx, v, qs.Dataset.ID)
	} else {
		ds, err = p.Store.DatasetByName(ctx, v, qs.Dataset.Name)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && ds.DeletedAt != nil) {
		return m, Errors{valid.E("dataset_id", "manifest.no_dataset", "Ref", fmt.Sprint(qs.Dataset))}
	}
	if err != nil {
		return m, err
	}
	target, err := p.servingTarget(ctx, model)
	if err != nil {
		return m, err
	}
	zero := 0.0
	scorer := ds.DefaultScorer
	if !slices.Contains(Scorers, scorer) {
		scorer = ""
	}
	name := qs.Name
	if strings.TrimSpace(name) == "" {
		name = truncate(model.Name+" on "+ds.Name, 200)
	}
	return Manifest{
		Name:     name,
		Dataset:  DatasetRef{ID: ds.ID},
		Targets:  []Target{target},
		Load:     jobs.LoadProfile{Profile: jobs.LoadSequential},
		Sampling: jobs.Sampling{Temperature: &zero, MaxTokens: QuickStartMaxTokens},
		Scorer:   scorer,
	}, nil
}

// servingTarget is the target a quick start runs model on (see
// QuickStart), or an error naming the model and what is missing.
func (p *Service) servingTarget(ctx context.Context, model store.Model) (Target, error) {
	served, err := p.Store.ServedTargets(ctx, jobs.ProtocolVersion, p.StaleAfter)
	if err != nil {
		return Target{}, err
	}
	// A real runtime first: the simulated one measures nothing real.
	slices.SortStableFunc(served, func(a, b store.ServedTarget) int {
		switch {
		case a.Runtime == "sim" && b.Runtime != "sim":
			return 1
		case a.Runtime != "sim" && b.Runtime == "sim":
			return -1
		}
		return 0
	})
	served, err = p.servingModel(ctx, served, model.Name)
	if err != nil {
		return Target{}, err
	}
	need := conclude.EstimateMemoryGB(model.ParamsB, model.Quantization)
	if model.MemoryGB != nil {
		need = *model.MemoryGB
	}
	var tooSmall []string
	for _, t := range served {
		if !slices.Contains(Runtimes, t.Runtime) {
			continue
		}
		hw, err := p.Store.HardwareProfileBySlug(ctx, t.Hardware)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return Target{}, err
		}
		capacity := float64(hw.GPUCount) * float64(hw.GPUMemoryBytes) / 1e9
		if t.Runtime == "sim" || hw.GPUCount == 0 || need <= capacity {
			return Target{Model: model.Name, Runtime: t.Runtime, Hardware: t.Hardware}, nil
		}
		tooSmall = append(tooSmall, fmt.Sprintf("%s on %s (%.1f GB)", t.Runtime, t.Hardware, capacity))
	}
	if len(tooSmall) == 0 {
		return Target{}, Errors{valid.E("model_id", "manifest.no_agent_online", "Model", strconv.Quote(model.Name), "Stale", p.StaleAfter)}
	}
	return Target{}, Errors{valid.E("model_id", "manifest.no_agent_large", "Model", strconv.Quote(model.Name),
		"Need", fmt.Sprintf("%.1f", need), "Serve", strings.Join(tooSmall, ", "))}
}

// launchers are the runtimes that serve whatever model a run names: the
// simulated one, and those agentd starts with the model (white-box).
var launchers = []string{"sim", "vllm", "sglang", "tgi", "llama-cpp", "ollama"}

// servingModel keeps the served targets whose runtime serves model: a
// launcher, or a remote provider with a price for the model.
func (p *Service) servingModel(ctx context.Context, served []store.ServedTarget, model string) ([]store.ServedTarget, error) {
	prices, err := p.Store.ListProviderPrices(ctx)
	if err != nil {
		return nil, err
	}
	priced := map[[2]string]bool{}
	for _, pr := range prices {
		priced[[2]string{pr.Provider, pr.Model}] = true
	}
	return slices.DeleteFunc(served, func(t store.ServedTarget) bool {
		return !slices.Contains(launchers, t.Runtime) && !priced[[2]string{t.Runtime, model}]
	}), nil
}

// truncate cuts s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
