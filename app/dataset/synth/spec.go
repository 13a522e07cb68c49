package synth

import (
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/ruckus/ruckus/app/valid"
)

// Kinds of workload a Spec generates.
const (
	// KindRandom: Count independent prompts (vLLM bench's random dataset,
	// GuideLLM's synthetic data).
	KindRandom = "random"
	// KindSharedPrefix: Prefixes shared prefixes of PrefixTokens tokens,
	// each followed by SuffixesPerPrefix different suffixes (vLLM bench's
	// prefix repetition), in a seeded random order.
	KindSharedPrefix = "shared-prefix"
	// KindMultiTurn: Count conversations of Turns turns each; every turn
	// is an item sent once the previous turn of its conversation has been
	// answered, with the answers in its history.
	KindMultiTurn = "multi-turn"
	// KindTrace: items with arrival times, sent at those times by the
	// trace load profile: from an uploaded JSONL trace (Trace), or
	// generated at Rate requests/s with constant or Poisson gaps.
	KindTrace = "trace"
)

// Endpoints an item may target.
const (
	EndpointChat        = "chat"
	EndpointCompletions = "completions"
)

// Arrival processes of a generated trace.
const (
	ArrivalPoisson  = "poisson"
	ArrivalConstant = "constant"
)

// Bounds of a Spec: what one generated dataset may cost the server.
const (
	MaxItems = 100_000
	// MaxTotalTokens bounds the sum of the largest prompts a Spec can
	// produce (about 7 bytes a token stored).
	MaxTotalTokens = 20_000_000
	MaxTurns       = 64
	MaxRate        = 10_000
)

// Spec is what a synthetic dataset is generated from: the form, the API
// and a benchmark manifest's synthetic key all decode into it, and the
// dataset keeps it to say how it was made.
//
// Each field's own rules are its tags; a field of another kind is not
// required (the form sends them all) but is still bounded. The rules that
// depend on the kind beyond that, or weigh fields against each other, are
// the named steps of Validate.
type Spec struct {
	Kind string `json:"kind" yaml:"kind" validate:"required,oneof=random shared-prefix multi-turn trace" msg_required:"synth.kind_required"`
	// Count is the number of items (random, generated trace) or of
	// conversations (multi-turn).
	Count int    `json:"count,omitempty" yaml:"count,omitempty" validate:"min=0,max=100000" msg:"synth.count"`
	Seed  uint64 `json:"seed" yaml:"seed"`
	// Endpoint is chat (default) or completions.
	Endpoint string `json:"endpoint,omitempty" yaml:"endpoint,omitempty" validate:"required,oneof=chat completions"`
	// Input is the prompt length in tokens (the suffix's, for
	// shared-prefix; each user turn's, for multi-turn); Output the answer
	// length asked for. Input is validated only when the items need it
	// (an uploaded trace's lines give their own).
	Input  Dist `json:"input" yaml:"input" validate:"-"`
	Output Dist `json:"output" yaml:"output"`
	// FreeOutput asks only max_tokens of the runtime, without min_tokens
	// and ignore_eos: for APIs that refuse fields they do not know.
	FreeOutput bool `json:"free_output,omitempty" yaml:"free_output,omitempty"`

	Prefixes          int `json:"prefixes,omitempty" yaml:"prefixes,omitempty" validate:"required_if=Kind shared-prefix,min=0,max=1000" msg:"synth.prefixes"`
	SuffixesPerPrefix int `json:"suffixes_per_prefix,omitempty" yaml:"suffixes_per_prefix,omitempty" validate:"required_if=Kind shared-prefix,min=0,max=100000" msg:"synth.suffixes_per_prefix"`
	PrefixTokens      int `json:"prefix_tokens,omitempty" yaml:"prefix_tokens,omitempty" validate:"required_if=Kind shared-prefix,min=0,max=131072" msg:"synth.prefix_tokens"`

	// Turns is validated only for multi-turn (another kind ignores it).
	Turns Dist `json:"turns,omitzero" yaml:"turns,omitempty" validate:"-"`

	Rate    float64 `json:"rate,omitempty" yaml:"rate,omitempty" validate:"finite,min=0,max=10000" msg_min:"synth.rate" msg_max:"synth.rate"`
	Arrival string  `json:"arrival,omitempty" yaml:"arrival,omitempty" validate:"omitempty,oneof=poisson constant"`
	// Trace is an uploaded JSONL trace (see ParseTrace); when set, Count,
	// Rate, Arrival and Input come from it instead. Output is then the
	// length of lines without output_length. Its lines are checked by
	// ParseTrace, their errors under "trace".
	Trace string `json:"trace,omitempty" yaml:"trace,omitempty"`
	// TraceSHA256 replaces Trace in the spec a dataset keeps.
	TraceSHA256 string `json:"trace_sha256,omitempty" yaml:"trace_sha256,omitempty" validate:"omitempty,len=64,hexadecimal" msg:"synth.trace_sha256"`
}

// FieldError names the field of a Spec that is wrong by its path
// ("input.mean", "trace"); a trace's errors name its line and field in
// the message.
type FieldError = valid.FieldError

// Errors is a Spec's list of errors; it is itself an error.
type Errors = valid.Errors

// rules checks a Spec's and a Dist's tags.
var rules = sync.OnceValue(func() *valid.Validator { return valid.New("json", "yaml") })

// Normalize fills the defaults a person need not give: kind random,
// endpoint chat, Poisson arrivals, one turn.
func (s *Spec) Normalize() {
	if s.Kind == "" {
		s.Kind = KindRandom
	}
	if s.Endpoint == "" {
		s.Endpoint = EndpointChat
	}
	if s.Kind == KindTrace && s.Arrival == "" && s.Trace == "" {
		s.Arrival = ArrivalPoisson
	}
}

// Validate checks s (after Normalize) and, for an uploaded trace, parses
// it: the lines are returned for Items. Every error names its field.
//
// The rules of one field are the tags of Spec and Dist; the steps after
// them are what depends on the kind and the limits on totals.
func (s Spec) Validate() ([]TraceLine, Errors) {
	errs := rules().Struct(s)
	errs = append(errs, s.validateCount()...)
	if s.Kind == KindMultiTurn {
		errs = append(errs, s.Turns.validate("turns", MaxTurns)...)
	}
	lines, terrs := s.validateTrace()
	errs = append(errs, terrs...)
	inputNeeded := s.Kind != KindTrace || s.Trace == ""
	if inputNeeded {
		errs = append(errs, s.Input.validate("input", MaxTokens)...)
	}
	errs = append(errs, s.Output.steps("output", MaxTokens)...)
	if len(errs) > 0 {
		return nil, errs
	}
	if errs := s.validateTotals(len(lines)); len(errs) > 0 {
		return nil, errs
	}
	return lines, nil
}

// validateCount: random items, multi-turn conversations and generated
// trace requests need a count (shared-prefix's is prefixes ×
// suffixes_per_prefix; an uploaded trace's is its lines).
func (s Spec) validateCount() Errors {
	key := map[string]string{KindRandom: "synth.count_items", KindMultiTurn: "synth.count_conversations", KindTrace: "synth.count_requests"}[s.Kind]
	if key == "" || (s.Kind == KindTrace && s.Trace != "") || s.Count != 0 {
		return nil // the count's tags bound it
	}
	var errs Errors
	errs.Say("count", key, "Max", MaxItems)
	return errs
}

// validateTrace: an uploaded trace is parsed and sets the items and their
// times itself; a generated one needs its rate (its arrival's tags say
// poisson or constant).
func (s Spec) validateTrace() ([]TraceLine, Errors) {
	if s.Kind != KindTrace {
		return nil, nil
	}
	var errs Errors
	if s.Trace == "" {
		if s.Rate == 0 {
			errs.Say("rate", "synth.rate_needed", "Max", MaxRate)
		}
		return nil, errs
	}
	lines, terrs := ParseTrace(strings.NewReader(s.Trace))
	for _, te := range terrs {
		errs = append(errs, valid.FromMessage("trace", te.Whole()))
	}
	if s.Count != 0 || s.Rate != 0 || s.Arrival != "" {
		errs.Say("trace", "synth.trace_sets_items")
	}
	return lines, errs
}

// validateTotals: what the spec would generate in all, once each field is
// right: prefixes × suffixes_per_prefix and conversations × turns at most
// MaxItems items, and the prompts' largest total at most MaxTotalTokens.
func (s Spec) validateTotals(traceLines int) Errors {
	var errs Errors
	items := s.Count
	switch s.Kind {
	case KindSharedPrefix:
		items = s.Prefixes * s.SuffixesPerPrefix
		if items > MaxItems {
			errs.Say("suffixes_per_prefix", "synth.too_many_prefixed", "Max", MaxItems, "Got", items)
			return errs
		}
	case KindMultiTurn:
		items = s.Count * s.Turns.Upper(MaxTurns)
		if items > MaxItems {
			errs.Say("count", "synth.too_many_turns", "Max", MaxItems, "Got", items)
			return errs
		}
	case KindTrace:
		if s.Trace != "" {
			return nil // each line gives its own input length or prompt
		}
	}
	prefix := 0
	if s.Kind == KindSharedPrefix {
		prefix = s.PrefixTokens
	}
	if total := float64(items) * float64(s.Input.Upper(MaxTokens)+prefix); total > MaxTotalTokens {
		errs.Say("input", "synth.too_many_tokens", "Total", strconv.FormatFloat(total, 'f', 0, 64), "Max", MaxTotalTokens)
	}
	return errs
}

// Meta is what an item records about how it was generated, under the
// "synthetic" key beside its request: the lengths asked for, to set beside
// the runtime's usage, and what orders it (conversation turn, arrival).
type Meta struct {
	// InputTokens is the prompt's length in vocabulary words (≈ tokens),
	// the shared prefix included; for a turn, its own user message only.
	// Zero when the prompt was given as text (a trace's prompt).
	InputTokens int `json:"input_tokens,omitempty"`
	// OutputTokens is the answer length asked for (max_tokens).
	OutputTokens int `json:"output_tokens,omitempty"`
	// Prefix is the shared prefix's number (from 1) and PrefixTokens its
	// length, for shared-prefix items.
	Prefix       int `json:"prefix,omitempty"`
	PrefixTokens int `json:"prefix_tokens,omitempty"`
	// Conversation and Turn (from 0) place a multi-turn item.
	Conversation string `json:"conversation,omitempty"`
	Turn         int    `json:"turn,omitempty"`
	// ArrivalS is a trace item's send time in seconds from the start.
	ArrivalS *float64 `json:"arrival_s,omitempty"`
}

// Item is one generated dataset item.
type Item struct {
	CustomID string
	// Request is the stored request: the OpenAI batch shape
	// {"method","url","body"} that every dataset item has, plus
	// "synthetic": Meta.
	Request json.RawMessage
	// Line is the item as a line of JSONL ({"custom_id",…}), what the
	// dataset's size and checksum are taken over.
	Line []byte
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type body struct {
	Messages  []message `json:"messages,omitempty"`
	Prompt    *string   `json:"prompt,omitempty"`
	MaxTokens int       `json:"max_tokens"`
	MinTokens int       `json:"min_tokens,omitempty"`
	IgnoreEOS bool      `json:"ignore_eos,omitempty"`
}

type line struct {
	CustomID  string `json:"custom_id,omitempty"`
	Method    string `json:"method"`
	URL       string `json:"url"`
	Body      body   `json:"body"`
	Synthetic Meta   `json:"synthetic"`
}

// Items yields the items of s, which must have passed Validate (lines are
// what it returned). The same s gives the same items, byte for byte.
func (s Spec) Items(lines []TraceLine) iter.Seq[Item] {
	return func(yield func(Item) bool) {
		g := &generator{s: s, rng: rand.New(rand.NewPCG(s.Seed, 0x73796e7468)), yield: yield} // "synth"
		switch s.Kind {
		case KindRandom:
			g.random()
		case KindSharedPrefix:
			g.sharedPrefix()
		case KindMultiTurn:
			g.multiTurn()
		case KindTrace:
			if s.Trace != "" {
				g.replay(lines)
				return
			}
			g.arrivals()
		}
	}
}

// generator yields a spec's items from one random stream; the order of
// its draws is what makes the same spec give the same items.
type generator struct {
	s     Spec
	rng   *rand.Rand
	b     strings.Builder
	yield func(Item) bool
}

// prompt is n tokens of text.
func (g *generator) prompt(n int) string {
	g.b.Reset()
	text(&g.b, g.rng, n)
	return g.b.String()
}

// emit yields one item; false when the consumer stops.
func (g *generator) emit(id, content string, m Meta) bool {
	return g.yield(g.s.item(id, content, m))
}

// random: Count independent prompts.
func (g *generator) random() {
	s := g.s
	for i := range s.Count {
		in, out := s.Input.draw(g.rng, MaxTokens), s.Output.draw(g.rng, MaxTokens)
		if !g.emit(fmt.Sprintf("synth-%06d", i+1), g.prompt(in), Meta{InputTokens: in, OutputTokens: out}) {
			return
		}
	}
}

// sharedPrefix: each prefix with each of its suffixes, in a shuffled order
// so that requests sharing a prefix are not sent back to back.
func (g *generator) sharedPrefix() {
	s := g.s
	prefixes := make([]string, s.Prefixes)
	for p := range prefixes {
		prefixes[p] = g.prompt(s.PrefixTokens)
	}
	order := make([]int, s.Prefixes*s.SuffixesPerPrefix)
	for i := range order {
		order[i] = i
	}
	g.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, k := range order {
		p, sfx := k%s.Prefixes, k/s.Prefixes
		in, out := s.Input.draw(g.rng, MaxTokens), s.Output.draw(g.rng, MaxTokens)
		id := fmt.Sprintf("prefix-%04d-%06d", p+1, sfx+1)
		if !g.emit(id, prefixes[p]+g.prompt(in), Meta{InputTokens: s.PrefixTokens + in, OutputTokens: out, Prefix: p + 1, PrefixTokens: s.PrefixTokens}) {
			return
		}
	}
}

// multiTurn: Count conversations of a drawn number of turns each.
func (g *generator) multiTurn() {
	s := g.s
	for c := range s.Count {
		turns := s.Turns.draw(g.rng, MaxTurns)
		conv := fmt.Sprintf("conv-%06d", c+1)
		for t := range turns {
			in, out := s.Input.draw(g.rng, MaxTokens), s.Output.draw(g.rng, MaxTokens)
			if !g.emit(fmt.Sprintf("%s-turn-%02d", conv, t), g.prompt(in), Meta{InputTokens: in, OutputTokens: out, Conversation: conv, Turn: t}) {
				return
			}
		}
	}
}

// replay: one item per trace line, at its timestamp, with its prompt or
// lengths; an output length the trace lacks is drawn.
func (g *generator) replay(lines []TraceLine) {
	for i, l := range lines {
		m := Meta{InputTokens: l.InputLength, OutputTokens: l.OutputLength, ArrivalS: &l.Timestamp}
		if m.OutputTokens == 0 {
			m.OutputTokens = g.s.Output.draw(g.rng, MaxTokens)
		}
		content := l.Prompt
		if content == "" {
			content = g.prompt(l.InputLength)
		}
		if !g.emit(fmt.Sprintf("trace-%06d", i+1), content, m) {
			return
		}
	}
}

// arrivals: Count prompts with arrival times at Rate, evenly spaced or
// as a Poisson process.
func (g *generator) arrivals() {
	s := g.s
	at := 0.0
	for i := range s.Count {
		in, out := s.Input.draw(g.rng, MaxTokens), s.Output.draw(g.rng, MaxTokens)
		ts := math.Round(at*1e6) / 1e6
		if !g.emit(fmt.Sprintf("trace-%06d", i+1), g.prompt(in), Meta{InputTokens: in, OutputTokens: out, ArrivalS: &ts}) {
			return
		}
		gap := 1 / s.Rate
		if s.Arrival == ArrivalPoisson {
			gap = g.rng.ExpFloat64() / s.Rate
		}
		at += gap
	}
}

// item encodes one item; json.Marshal of these structs is deterministic.
func (s Spec) item(id, content string, m Meta) Item {
	l := line{CustomID: id, Method: "POST", Synthetic: m, Body: body{MaxTokens: m.OutputTokens}}
	if !s.FreeOutput {
		l.Body.MinTokens, l.Body.IgnoreEOS = m.OutputTokens, true
	}
	if s.Endpoint == EndpointCompletions {
		l.URL, l.Body.Prompt = "/v1/completions", &content
	} else {
		l.URL, l.Body.Messages = "/v1/chat/completions", []message{{Role: "user", Content: content}}
	}
	full, err := json.Marshal(l)
	if err != nil {
		panic("synth: encoding an item: " + err.Error()) // only strings and ints: cannot fail
	}
	l.CustomID = ""
	req, _ := json.Marshal(l)
	return Item{CustomID: id, Request: req, Line: full}
}

// Stored is the spec a dataset keeps: an uploaded trace is replaced by its
// checksum, so the dataset row stays small.
func (s Spec) Stored(traceSHA256 string) Spec {
	if s.Trace != "" {
		s.Trace, s.TraceSHA256 = "", traceSHA256
	}
	return s
}
