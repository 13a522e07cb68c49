package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// SimSettings are the manifest's settings for targets on the simulated
// runtime. The simulated runtime has no model, so a run on it can show a
// quality only if someone says how often each model is right: Accuracy
// does, and the server (the only one allowed to read the references)
// writes each item's answer when it plans the run.
type SimSettings struct {
	// Accuracy is the share of items each model answers right, by
	// registry name, each in [0, 1]. A model missing here takes the
	// server's default (`ruckus serve --sim-accuracy`); a model with
	// neither streams filler, which scores 0.
	Accuracy map[string]float64 `json:"accuracy,omitempty" yaml:"accuracy,omitempty" validate:"max=50,dive,keys,model_name,endkeys,finite,gte=0,lte=1" msg_max:"manifest.sim_models" msg_finite:"manifest.sim_accuracy" msg_gte:"manifest.sim_accuracy" msg_lte:"manifest.sim_accuracy"`
	// Seed chooses, with the benchmark and the model, which items are
	// answered right (SimRight): the same seed, benchmark and model give
	// the same answers; another benchmark draws afresh.
	Seed uint64 `json:"seed,omitempty" yaml:"seed,omitempty"`
}

// maxSimModels bounds the models a sim accuracy list names (and
// SimSettings.Accuracy's rule).
const maxSimModels = 50

func checkAccuracy(p float64) string {
	if !finite(p) || p < 0 || p > 1 {
		return fmt.Sprintf("an accuracy is a share from 0 to 1 (got %v)", p)
	}
	return ""
}

// MaxSimAccuracyLen bounds a --sim-accuracy value.
const MaxSimAccuracyLen = 8192

// ParseSimAccuracy reads a list of model=accuracy pairs separated by
// commas, such as "acme/small-1b=0.55,acme/large-8b=0.8": the server's
// default accuracies for sim targets (`--sim-accuracy`). Model names
// follow the registry's pattern; accuracies are finite shares in [0, 1].
func ParseSimAccuracy(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if len(s) > MaxSimAccuracyLen {
		return nil, fmt.Errorf("--sim-accuracy: at most %d characters", MaxSimAccuracyLen)
	}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for i, pair := range strings.Split(s, ",") {
		model, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return nil, fmt.Errorf("--sim-accuracy item %d (%q): want model=accuracy", i+1, pair)
		}
		model = strings.TrimSpace(model)
		if err := jobs.CheckModelName(model); err != nil {
			return nil, fmt.Errorf("--sim-accuracy item %d: %w", i+1, err)
		}
		p, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("--sim-accuracy item %d (%s): %q is not a number", i+1, model, val)
		}
		if msg := checkAccuracy(p); msg != "" {
			return nil, fmt.Errorf("--sim-accuracy item %d (%s): %s", i+1, model, msg)
		}
		if _, dup := out[model]; dup {
			return nil, fmt.Errorf("--sim-accuracy item %d: %s is given twice", i+1, model)
		}
		if len(out) == maxSimModels {
			return nil, fmt.Errorf("--sim-accuracy: at most %d models", maxSimModels)
		}
		out[model] = p
	}
	return out, nil
}

// simAccuracy is the accuracy a sim target's model runs at: the
// manifest's, else the server's default; false when neither sets one.
func (p *Service) simAccuracy(m Manifest, model string) (float64, bool) {
	if m.Sim != nil {
		if v, ok := m.Sim.Accuracy[model]; ok {
			return v, true
		}
	}
	v, ok := p.SimAccuracy[model]
	return v, ok
}

// SimRight tells whether model answers item idx right at accuracy p in
// benchmark (its id) under the manifest's sim seed: an independent
// Bernoulli draw per item (docs/simulated-runtime.md#which-items-are-right).
// Two models at the same accuracy are right on different items, as real
// models are, so two runs' qualities differ by binomial noise and a
// paired test between them sees it; the same seed, benchmark, model and
// item always draw alike (a retried run answers as before).
func SimRight(seed uint64, benchmark int64, model string, idx int, p float64) bool {
	return simDraw(simSource(seed, benchmark, model, idx)) < p
}

// simSource is the random source of one item's simulated answer: ChaCha8
// keyed by the seed, the benchmark, the model and the item, so every
// item's draw is independent of every other's. Its first value decides
// right or wrong (simDraw); the rest shape a wrong answer.
func simSource(seed uint64, benchmark int64, model string, idx int) *rand.ChaCha8 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(model))
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], uint64(benchmark))
	binary.LittleEndian.PutUint64(key[16:], h.Sum64())
	binary.LittleEndian.PutUint64(key[24:], uint64(idx))
	return rand.NewChaCha8(key)
}

// simDraw is the source's next value as a uniform share in [0, 1).
func simDraw(src *rand.ChaCha8) float64 {
	return float64(src.Uint64()>>11) / (1 << 53)
}

// SimAnswer writes the answer the simulated runtime gives to an item: one
// the scorer counts right when right is true, else a plausible wrong one
// in the same shape (another number after "####", another letter,
// a perturbed text, the same value in a regex pattern's form). For a
// code item scored by execution, a right answer is its canonical
// solution and a wrong one a body that fails its tests. scorer is the
// benchmark's scorer (or the dataset's default). It returns false when
// the item has no reference (or canonical solution) to answer from; the
// runtime then streams filler.
func SimAnswer(scorer string, ref json.RawMessage, right bool, r *rand.Rand) (string, bool) {
	return SimAnswerWith(scorer, score.Options{}, ref, right, r)
}

// SimAnswerWith is SimAnswer for a scorer with options (a regex pattern,
// a JSON Schema): the answer is checked with them. A right answer is the
// reference (JSON for json-schema), which the options must accept for it
// to score.
func SimAnswerWith(scorer string, opts score.Options, ref json.RawMessage, right bool, r *rand.Rand) (string, bool) {
	if out, ok := codeAnswer(scorer, ref, right); ok {
		return out, true
	}
	refs := score.References(ref)
	if len(refs) == 0 || strings.TrimSpace(refs[0]) == "" {
		return "", false
	}
	want := refs[0]
	worked := workedAnswer(ref) // GSM8K's reasoning ending "#### N"
	f, err := score.New(scorer, opts)
	if err != nil {
		f = nil
	}
	var out string
	for try := range 8 {
		switch kind(scorer, opts, want) {
		case "pattern":
			// The worked solution may hold a match of its own that
			// comes first: then the answer is the pattern's form alone.
			w := worked
			if try%2 == 1 {
				w = ""
			}
			out = regexAnswer(opts.Pattern, w, want, right, r)
		case "numeric":
			out = numericAnswer(worked, want, right, r)
		case "choice":
			out = choiceAnswer(want, right, r)
		case "json":
			out = jsonAnswer(want, right)
		default:
			out = textAnswer(want, refs, right, r)
		}
		if f == nil {
			return out, true
		}
		s := f(out, refs)
		if (right && s == 1) || (!right && s < 1) {
			return out, true
		}
	}
	return out, true
}

// kind is the answer shape the scorer reads.
func kind(scorer string, opts score.Options, want string) string {
	switch scorer {
	case "numeric":
		return "numeric"
	case "regex":
		if opts.Pattern != "" {
			return "pattern"
		}
		if choiceLetter(want) != "" {
			return "choice"
		}
	case "choice":
		if choiceLetter(want) != "" {
			return "choice"
		}
	case "json", "json-schema":
		return "json"
	case "":
		if _, ok := score.FinalNumber(want); ok && len(strings.Fields(want)) == 1 {
			return "numeric"
		}
	}
	return "text"
}

// workedAnswer is a reference object's "answer" text (GSM8K's worked
// solution), "" when there is none.
func workedAnswer(ref json.RawMessage) string {
	var obj struct {
		Answer string `json:"answer"`
	}
	if json.Unmarshal(ref, &obj) != nil {
		return ""
	}
	return obj.Answer
}

func numericAnswer(worked, want string, right bool, r *rand.Rand) string {
	final := want
	if n, ok := score.FinalNumber(want); ok {
		final = n
	}
	if !right {
		final = wrongNumber(final, r)
	}
	if worked == "" {
		return fmt.Sprintf("Working it through, the answer is %s.\n#### %s", final, final)
	}
	if i := strings.LastIndex(worked, "####"); i >= 0 {
		worked = strings.TrimRight(worked[:i], " \n")
	}
	return worked + "\n#### " + final
}

// wrongNumber is a near miss: off by a little, by a factor, or by a sign.
func wrongNumber(n string, r *rand.Rand) string {
	v, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return strconv.Itoa(1 + r.IntN(100))
	}
	var w float64
	switch r.IntN(3) {
	case 0:
		w = v + float64(1+r.IntN(9))*[]float64{-1, 1}[r.IntN(2)]
	case 1:
		w = v * []float64{2, 0.5, 10}[r.IntN(3)]
	default:
		w = v + float64(10+r.IntN(90))
	}
	if w == v {
		w = v + 1
	}
	if v == math.Trunc(v) {
		w = math.Round(w)
		if w == v {
			w++
		}
	}
	return strconv.FormatFloat(w, 'f', -1, 64)
}

func choiceAnswer(want string, right bool, r *rand.Rand) string {
	letter := choiceLetter(want)
	if !right {
		letter = otherLetter(letter, r)
	}
	return fmt.Sprintf("Looking at each option in turn, the answer is (%s).", letter)
}

// otherLetter is a choice letter other than letter, from A–D at least.
func otherLetter(letter string, r *rand.Rand) string {
	top := max(int(letter[0]-'A'), 3) // at least A–D
	others := make([]byte, 0, top+1)
	for c := byte('A'); c <= 'A'+byte(top); c++ {
		if c != letter[0] {
			others = append(others, c)
		}
	}
	return string(others[r.IntN(len(others))])
}

// choiceLetter is the letter a choice reference names ("c", "(C)"), ""
// when it names none.
func choiceLetter(want string) string {
	w := strings.ToUpper(strings.TrimSpace(want))
	if len(w) > 3 {
		return ""
	}
	return score.Choice(w)
}

func jsonAnswer(want string, right bool) string {
	b := []byte(want)
	if !json.Valid(b) {
		b, _ = json.Marshal(map[string]string{"answer": want})
	}
	if !right {
		return string(b[:len(b)/2])
	}
	return string(b)
}

// offTopic is what a wrong text answer is written from: everyday words
// an answer about something else would use. Only those the reference
// does not hold are taken (offTopicFor).
var offTopic = strings.Fields(`harbour lantern orchard meadow copper festival village market winter summer
journey recipe engine ledger canvas harvest pottery weaving ferry chapel quarry tavern bakery carpenter
shepherd weaver merchant sailor farmer pilgrim traveller modest quiet gentle rusty wooden narrow painted
carried repaired mended polished gathered traded sheltered kettle blanket saddle umbrella bicycle violet
lemon pepper walnut cabbage pebble feather ribbon button thimble puppet cobbler baker parlour attic
cellar porch hedge puddle drizzle breeze sunset twilight yesterday tomorrow cheerful sleepy noisy tidy`)

// offTopicFor is the off-topic words that share no token with the
// references, compared as the scorers see words (lower case, letters and
// digits, and Porter stems for ROUGE's stemmed variants): an answer made
// of them scores 0 with exact match, token F1 and ROUGE, and next to 0
// with BLEU.
func offTopicFor(refs []string) []string {
	seen := map[string]bool{}
	for _, ref := range refs {
		for _, t := range strings.FieldsFunc(strings.ToLower(ref), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) {
			seen[t], seen[score.Stem(t)] = true, true
		}
	}
	var out []string
	for _, w := range offTopic {
		if !seen[w] && !seen[score.Stem(w)] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return offTopic
	}
	return out
}

// textAnswer is the reference, or a plausible wrong answer that shares no
// word with any reference (offTopicFor): a short answer gets another value
// (another number, other words), a longer one an off-topic text of half
// to four fifths its length, in sentences. So a wrong answer scores
// about 0 with every text scorer, and a run's quality under ROUGE, BLEU
// or F1 is close to the share answered right, as under exact match
// (docs/simulated-runtime.md#what-the-answers-look-like).
func textAnswer(want string, refs []string, right bool, r *rand.Rand) string {
	if right {
		return want
	}
	words := strings.Fields(want)
	if n, ok := score.FinalNumber(want); ok && len(words) == 1 {
		return wrongNumber(n, r)
	}
	vocab := offTopicFor(append([]string{want}, refs...))
	if len(words) <= 3 {
		out := make([]string, max(len(words), 1))
		for i := range out {
			out[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(out, " ")
	}
	n := max(3, len(words)*(5+r.IntN(4))/10)
	var b strings.Builder
	for i, left := 0, 0; i < n; i++ {
		w := vocab[r.IntN(len(vocab))]
		if left == 0 { // a sentence of 5–9 words begins
			if i > 0 {
				b.WriteString(". ")
			}
			left = 5 + r.IntN(5)
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		left--
	}
	b.WriteByte('.')
	return b.String()
}

// simAnswers yields the answers of a run's items in benchmark: the
// reference for the items the model gets right, a wrong answer for the
// others, nothing for items without a reference.
func simAnswers(refs []simRef, scorer string, opts score.Options, model string, seed uint64, benchmark int64, p float64) iter.Seq[store.SimAnswer] {
	return func(yield func(store.SimAnswer) bool) {
		for _, it := range refs {
			src := simSource(seed, benchmark, model, it.idx)
			right := simDraw(src) < p
			text, ok := SimAnswerWith(scorer, opts, it.ref, right, rand.New(src))
			if !ok {
				continue
			}
			if !yield(store.SimAnswer{Idx: it.idx, Answer: text}) {
				return
			}
		}
	}
}

// simRef is one item's reference, as the benchmark service reads it.
type simRef struct {
	idx int
	ref json.RawMessage
}

// writeSimAnswers writes a sim run's answers, in the transaction that
// creates it, when an accuracy is set for its model. benchmark is the
// run's benchmark, one of the draws' keys (SimRight); refs caches the
// dataset's references across the benchmark's runs.
func (p *Service) writeSimAnswers(ctx context.Context, q *store.Queries, m Manifest, plan Plan, r PlannedRun, benchmark, runID int64, refs *[]simRef) error {
	if r.Runtime != "sim" {
		return nil
	}
	acc, ok := p.simAccuracy(m, r.Model)
	if !ok {
		return nil
	}
	if *refs == nil {
		*refs = []simRef{}
		err := q.ItemReferences(ctx, plan.Dataset.ID, r.Items, func(idx int, ref []byte) error {
			if len(ref) > 0 {
				*refs = append(*refs, simRef{idx: idx, ref: slices.Clone(ref)})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	scorer, opts := m.Scorer, m.ScorerOptions.Score()
	if scorer == "" {
		scorer, opts = plan.Dataset.DefaultScorer, score.Options{}
	}
	var seed uint64
	if m.Sim != nil {
		seed = m.Sim.Seed
	}
	_, err := q.CopySimAnswers(ctx, runID, simAnswers(*refs, scorer, opts, r.Model, seed, benchmark, acc))
	if err != nil {
		return fmt.Errorf("simulated answers of run %d: %w", runID, err)
	}
	return nil
}
