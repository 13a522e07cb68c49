package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
)

// FewShot is a benchmark's (or one target's) few-shot setting: K solved
// examples from the dataset before each question, built as
// lm-evaluation-harness builds num_fewshot prompts (its fewshot_context:
// the description, each example's question, the target delimiter and its
// answer, the fewshot delimiter, then the question). The examples come
// from the dataset itself, never the item being asked: for MMLU (and
// MBPP) lm-eval's first_n sampler, the first items of the item's subject
// without it; for the other suites its default sampler,
// random.Random(Seed).sample(items, K+1) drawn item after item in order,
// the item removed and the first K kept. K is part of what a run's
// quality and speed are comparable under.
type FewShot struct {
	K int `json:"k" yaml:"k" form:"fewshot_k" validate:"min=0,max=25" msg:"manifest.fewshot_k"`
	// Seed seeds the sampler (lm-eval's fewshot_random_seed); absent
	// means lm-eval's default, 1234.
	Seed *int64 `json:"seed,omitempty" yaml:"seed,omitempty" form:"fewshot_seed" validate:"omitnil,min=0,max=9007199254740991" msg:"manifest.fewshot_seed"`
	// Exemplars names a fixed set of published solved examples
	// (dataset.ExemplarSets: lm-eval's gsm8k-cot) written before every
	// item instead of examples drawn from the dataset: chain-of-thought
	// prompting. K and Seed are left out beside it.
	Exemplars string `json:"exemplars,omitempty" yaml:"exemplars,omitempty" form:"fewshot_exemplars" validate:"max=64"`
}

// maxFewShotSeed is the largest seed (2⁵³−1: exact in JSON numbers).
const maxFewShotSeed = 1<<53 - 1

// DefaultFewShotSeed is lm-eval's DEFAULT_OTHER_SEED (lm_eval/defaults.py),
// the few-shot seed when none is given.
const DefaultFewShotSeed = 1234

// maxFewShotItems bounds the dataset few-shot prompts are drawn from (the
// benchmark service holds every item's prompt pieces while it draws).
const maxFewShotItems = 200_000

// MaxFewShotBytes bounds what a benchmark's few-shot prompts may take
// together (they are written beside its runs when it is created, each
// item with its k solved examples), estimated from the items' stored
// prompt pieces before anything is written.
const MaxFewShotBytes = 512 << 20

// fewShotOf is a target's effective few-shot setting: its own, else the
// benchmark's, else none (k 0). A fixed exemplar set gives its size as k,
// seed 0 and its name.
func fewShotOf(m Manifest, t Target) (k int, seed int64, exemplars string) {
	f := m.FewShot
	if t.FewShot != nil {
		f = t.FewShot
	}
	if f == nil {
		return 0, 0, ""
	}
	if set, ok := dataset.Exemplars(f.Exemplars); ok {
		return len(set.Examples), 0, set.Name
	}
	if f.K == 0 {
		return 0, 0, ""
	}
	seed = DefaultFewShotSeed
	if f.Seed != nil {
		seed = *f.Seed
	}
	return f.K, seed, ""
}

// checkExemplars refuses a fixed exemplar set no one has published here,
// or given beside a k or seed, under path (fewshot or targets[i].fewshot).
func checkExemplars(f *FewShot, path string) Errors {
	var errs Errors
	if f == nil || f.Exemplars == "" {
		return nil
	}
	if _, ok := dataset.Exemplars(f.Exemplars); !ok {
		var names []string
		for _, s := range dataset.ExemplarSets() {
			names = append(names, s.Name)
		}
		errs.Say(path+".exemplars", "manifest.fewshot_exemplars_unknown", "Got", strconv.Quote(f.Exemplars), "Known", strings.Join(names, ", "))
	}
	if f.K != 0 || f.Seed != nil {
		errs.Say(path+".exemplars", "manifest.fewshot_exemplars_with_k")
	}
	return errs
}

// firstNFormats are the suites lm-eval samples with first_n (MMLU's dev
// split, MBPP's fixed examples); the others use its seeded sampler.
var firstNFormats = map[string]bool{string(dataset.FormatMMLU): true, string(dataset.FormatMBPP): true}

// FewShotExamples picks each of the first n items' examples (indexes into
// shots) as lm-eval's samplers do, or says why the dataset cannot give k.
func FewShotExamples(shots []dataset.Shot, n, k int, seed int64, firstN bool) ([][]int, error) {
	out := make([][]int, n)
	if k == 0 {
		return out, nil
	}
	if firstN {
		groups := map[string][]int{}
		for i, s := range shots {
			groups[s.Group] = append(groups[s.Group], i)
		}
		for i := range n {
			g := groups[shots[i].Group]
			if len(g) <= k {
				what := i18n.M("manifest.fewshot_subject_has", "Subject", strconv.Quote(shots[i].Group))
				if shots[i].Group == "" {
					what = i18n.M("manifest.fewshot_dataset_has")
				}
				return nil, i18n.NewError("manifest.fewshot_group_small", "K", k, "Need", k+1, "What", what, "N", len(g))
			}
			ex := make([]int, 0, k)
			for _, j := range g {
				if j != i && len(ex) < k {
					ex = append(ex, j)
				}
			}
			out[i] = ex
		}
		return out, nil
	}
	if len(shots) <= k {
		return nil, i18n.NewError("manifest.fewshot_too_few", "K", k, "Need", k+1, "N", len(shots))
	}
	r := newPyRandom(uint64(seed))
	for i := range n {
		ex := make([]int, 0, k)
		for _, j := range r.sample(len(shots), k+1) {
			if j != i && len(ex) < k {
				ex = append(ex, j)
			}
		}
		out[i] = ex
	}
	return out, nil
}

// fewShotPlan is what the benchmark service read and drew for a benchmark's
// few-shot runs: the dataset's prompt pieces and, per (k, seed), each
// item's examples.
type fewShotPlan struct {
	shots    []dataset.Shot
	examples map[[2]int64][][]int
}

// fewShotUse is one few-shot setting the runs use, with the manifest
// field that sets it.
type fewShotUse struct {
	path      string
	k         int
	seed      int64
	exemplars string
}

// planFewShot reads the dataset's prompt pieces and draws the examples of
// every few-shot setting the runs use; errors name the manifest field.
func (p *Service) planFewShot(ctx context.Context, m Manifest, ds store.Dataset, items int) (*fewShotPlan, Errors, error) {
	uses := fewShotUses(m)
	if len(uses) == 0 {
		return nil, nil, nil
	}
	if errs := fewShotRefused(m, ds, uses[0].path); len(errs) > 0 {
		return nil, errs, nil
	}
	fp := &fewShotPlan{shots: make([]dataset.Shot, 0, ds.ItemCount), examples: map[[2]int64][][]int{}}
	size, missing, err := p.readShots(ctx, ds, fp)
	if err != nil {
		return nil, nil, err
	}
	var errs Errors
	if missing || len(fp.shots) == 0 {
		errs.Say(uses[0].path, "manifest.fewshot_none_kept", "Format", ds.Format)
		return nil, errs, nil
	}
	firstN := firstNFormats[ds.Format]
	for _, u := range uses {
		if u.exemplars != "" {
			// A fixed set asks every item with the same examples: each
			// item needs its bare question.
			if i := slices.IndexFunc(fp.shots, func(s dataset.Shot) bool { return s.Question == "" }); i >= 0 {
				errs.Say(u.path, "manifest.fewshot_exemplars_question", "Set", u.exemplars, "Format", ds.Format)
			}
			continue
		}
		key := [2]int64{int64(u.k), u.seed}
		if _, done := fp.examples[key]; done {
			continue
		}
		ex, err := FewShotExamples(fp.shots, min(items, len(fp.shots)), u.k, u.seed, firstN)
		if err != nil {
			errs = append(errs, valid.FromError(u.path, err))
			continue
		}
		fp.examples[key] = ex
	}
	if len(errs) > 0 {
		return nil, errs, nil
	}
	if total := fp.promptBytes(uses, size) * int64(m.Runs()); total > MaxFewShotBytes {
		errs.Say(uses[0].path, "manifest.fewshot_too_big", "MiB", total>>20, "Max", MaxFewShotBytes>>20)
		return nil, errs, nil
	}
	return fp, nil, nil
}

// fewShotUses lists the few-shot settings of m's targets (the
// manifest's, or a target's own).
func fewShotUses(m Manifest) []fewShotUse {
	var uses []fewShotUse
	for i, t := range m.Targets {
		if k, seed, exemplars := fewShotOf(m, t); k > 0 {
			path := "fewshot"
			if t.FewShot != nil {
				path = fmt.Sprintf("targets[%d].fewshot", i)
			}
			if exemplars != "" {
				path += ".exemplars"
			} else {
				path += ".k"
			}
			uses = append(uses, fewShotUse{path: path, k: k, seed: seed, exemplars: exemplars})
		}
	}
	return uses
}

// fewShotRefused says why few-shot prompts cannot be built on the
// dataset, under the manifest field path; none when they can.
func fewShotRefused(m Manifest, ds store.Dataset, path string) Errors {
	var errs Errors
	switch {
	case m.Synthetic != nil:
		errs.Say(path, "manifest.fewshot_synthetic")
	case ds.Shots > 0:
		errs.Say(path, "manifest.fewshot_already", "Shots", ds.Shots)
	case ds.ItemCount > maxFewShotItems:
		errs.Say(path, "manifest.fewshot_items", "Max", maxFewShotItems, "N", ds.ItemCount)
	}
	return errs
}

// readShots reads the dataset's prompt pieces into fp.shots (the suites'
// as kept, GSM8K's and prompt/reference lines' read from their request
// and reference) and returns each item's size in bytes, and whether an
// item has none.
func (p *Service) readShots(ctx context.Context, ds store.Dataset, fp *fewShotPlan) ([]int, bool, error) {
	missing := false
	var size []int
	err := p.Store.ItemShots(ctx, ds.ID, func(_ int, raw, request, reference []byte) error {
		var s dataset.Shot
		switch {
		case raw != nil:
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
		case dataset.ShotOf(dataset.Format(ds.Format), request, reference) != nil:
			s = *dataset.ShotOf(dataset.Format(ds.Format), request, reference)
			raw = request
		default:
			missing = true
		}
		fp.shots = append(fp.shots, s)
		size = append(size, len(raw)+len(reference))
		return nil
	})
	return size, missing, err
}

// promptBytes is what one run of each use's prompts will take: per item,
// the item and its examples.
func (fp *fewShotPlan) promptBytes(uses []fewShotUse, size []int) int64 {
	var total int64
	for _, u := range uses {
		if set, ok := dataset.Exemplars(u.exemplars); ok {
			for i := range fp.shots {
				total += int64(size[i] + len(dataset.ExemplarRequest(set, dataset.Shot{}, 0)))
			}
			continue
		}
		for i, ex := range fp.examples[[2]int64{int64(u.k), u.seed}] {
			total += int64(size[i])
			for _, j := range ex {
				total += int64(size[j])
			}
		}
	}
	return total
}

// prompts yields the k-shot requests of a run's first n items: with its
// drawn examples, or with the fixed set named exemplars.
func (fp *fewShotPlan) prompts(k int, seed int64, exemplars string, n int) iter.Seq[store.RunPrompt] {
	if set, ok := dataset.Exemplars(exemplars); ok {
		return func(yield func(store.RunPrompt) bool) {
			for i := range min(n, len(fp.shots)) {
				if !yield(store.RunPrompt{Idx: i, Request: dataset.ExemplarRequest(set, fp.shots[i], k)}) {
					return
				}
			}
		}
	}
	return func(yield func(store.RunPrompt) bool) {
		ex := fp.examples[[2]int64{int64(k), seed}]
		buf := make([]dataset.Shot, 0, k)
		for i := range min(n, len(ex)) {
			buf = buf[:0]
			for _, j := range ex[i] {
				buf = append(buf, fp.shots[j])
			}
			if !yield(store.RunPrompt{Idx: i, Request: dataset.FewShotRequest(fp.shots[i], buf)}) {
				return
			}
		}
	}
}

// MaxFewShotVariants bounds the k a form lists.
const MaxFewShotVariants = 6

// ParseFewShot reads the new-benchmark form's few-shot fields: k (one
// number, or several separated by commas: each target runs once at each)
// and the seed ("" for DefaultFewShotSeed); none when k is empty.
// Errors name fewshot.k or fewshot.seed.
func ParseFewShot(ks, seedText string) ([]FewShot, Errors) {
	var errs Errors
	switch {
	case len(ks) > 200:
		errs.Say("fewshot.k", "manifest.fewshot_k_long")
	case len(seedText) > 20:
		errs.Say("fewshot.seed", "manifest.fewshot_seed_range", "Max", int64(maxFewShotSeed))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var seed *int64
	if seedText != "" {
		n, err := strconv.ParseInt(seedText, 10, 64)
		if err != nil || n < 0 || n > maxFewShotSeed {
			errs.Say("fewshot.seed", "manifest.fewshot_seed_bad", "Got", strconv.Quote(seedText), "Max", int64(maxFewShotSeed))
			return nil, errs
		}
		seed = &n
	}
	if ks == "" {
		return nil, errs
	}
	parts := strings.Split(ks, ",")
	if len(parts) > MaxFewShotVariants {
		errs.Say("fewshot.k", "manifest.fewshot_k_count", "Max", MaxFewShotVariants)
		return nil, errs
	}
	var out []FewShot
	seen := map[int]bool{}
	for _, p := range parts {
		k, err := strconv.Atoi(strings.TrimSpace(p))
		switch {
		case err != nil:
			errs.Say("fewshot.k", "manifest.fewshot_k_not_int", "Got", strconv.Quote(strings.TrimSpace(p)))
			return nil, errs
		case k < 0 || k > 25:
			errs.Say("fewshot.k", "manifest.fewshot_k_range", "Got", k)
			return nil, errs
		case seen[k]:
			errs.Say("fewshot.k", "manifest.fewshot_k_twice", "K", k)
			return nil, errs
		}
		seen[k] = true
		out = append(out, FewShot{K: k, Seed: seed})
	}
	return out, errs
}
