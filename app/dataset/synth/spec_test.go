package synth

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/valid"
)

type decoded struct {
	CustomID string `json:"custom_id"`
	URL      string `json:"url"`
	Body     struct {
		Messages []struct {
			Role, Content string
		} `json:"messages"`
		Prompt    *string `json:"prompt"`
		MaxTokens int     `json:"max_tokens"`
		MinTokens int     `json:"min_tokens"`
		IgnoreEOS bool    `json:"ignore_eos"`
	} `json:"body"`
	Synthetic Meta `json:"synthetic"`
}

func (d decoded) content() string {
	if d.Body.Prompt != nil {
		return *d.Body.Prompt
	}
	return d.Body.Messages[0].Content
}

func generate(t *testing.T, s Spec) ([]Item, []decoded) {
	t.Helper()
	s.Normalize()
	lines, errs := s.Validate()
	if len(errs) > 0 {
		t.Fatalf("validate: %v", errs)
	}
	var items []Item
	var ds []decoded
	for it := range s.Items(lines) {
		var d decoded
		if err := json.Unmarshal(it.Line, &d); err != nil {
			t.Fatalf("item %s: %v", it.CustomID, err)
		}
		var req map[string]json.RawMessage
		if err := json.Unmarshal(it.Request, &req); err != nil || req["custom_id"] != nil || req["body"] == nil || req["synthetic"] == nil {
			t.Fatalf("item %s: stored request %s", it.CustomID, it.Request)
		}
		items, ds = append(items, it), append(ds, d)
	}
	return items, ds
}

func jsonl(items []Item) []byte {
	var b bytes.Buffer
	for _, it := range items {
		b.Write(it.Line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestRandomItems(t *testing.T) {
	t.Parallel()
	spec := Spec{Seed: 7, Count: 500, Input: Dist{Kind: DistUniform, Min: 50, Max: 150}, Output: Dist{Kind: DistNormal, Mean: 64, StdDev: 8, Max: 80}}
	items, ds := generate(t, spec)
	if len(items) != 500 {
		t.Fatalf("%d items, want 500", len(items))
	}
	again, _ := generate(t, spec)
	if !bytes.Equal(jsonl(items), jsonl(again)) {
		t.Fatal("the same spec and seed gave different items")
	}
	spec.Seed = 8
	other, _ := generate(t, spec)
	if bytes.Equal(jsonl(items), jsonl(other)) {
		t.Fatal("another seed gave the same items")
	}
	seen := map[string]bool{}
	for _, d := range ds {
		m := d.Synthetic
		if got := len(strings.Fields(d.content())); got != m.InputTokens || m.InputTokens < 50 || m.InputTokens > 150 {
			t.Fatalf("%s: %d words, recorded %d", d.CustomID, got, m.InputTokens)
		}
		if d.Body.MaxTokens != m.OutputTokens || d.Body.MinTokens != m.OutputTokens || !d.Body.IgnoreEOS || m.OutputTokens < 1 || m.OutputTokens > 80 {
			t.Fatalf("%s: body asks max %d min %d ignore_eos %v for %d", d.CustomID, d.Body.MaxTokens, d.Body.MinTokens, d.Body.IgnoreEOS, m.OutputTokens)
		}
		if d.URL != "/v1/chat/completions" || d.Body.Messages[0].Role != "user" {
			t.Fatalf("%s: %s %+v", d.CustomID, d.URL, d.Body.Messages)
		}
		if seen[d.content()] {
			t.Fatalf("%s: a prompt repeats", d.CustomID)
		}
		seen[d.content()] = true
	}
	// What the generator writes is a dataset the upload parser accepts.
	p := dataset.NewParser(bytes.NewReader(jsonl(items)), dataset.Limits{})
	n := 0
	for _, ok := p.Next(); ok; _, ok = p.Next() {
		n++
	}
	if p.Err() != nil || p.ErrorCount() > 0 || n != 500 || p.Format() != dataset.FormatOpenAIBatch {
		t.Fatalf("parser: err %v, errors %v, %d items, format %s", p.Err(), p.Errors(), n, p.Format())
	}
}

func TestCompletionsAndFreeOutput(t *testing.T) {
	t.Parallel()
	_, ds := generate(t, Spec{Count: 3, Endpoint: EndpointCompletions, FreeOutput: true, Input: Fixed(10), Output: Fixed(5)})
	for _, d := range ds {
		if d.URL != "/v1/completions" || d.Body.Prompt == nil || d.Body.MaxTokens != 5 || d.Body.MinTokens != 0 || d.Body.IgnoreEOS {
			t.Fatalf("%+v", d)
		}
	}
}

func TestSharedPrefixStructure(t *testing.T) {
	t.Parallel()
	const P, S, L = 4, 25, 40
	items, ds := generate(t, Spec{Kind: KindSharedPrefix, Seed: 3, Prefixes: P, SuffixesPerPrefix: S, PrefixTokens: L,
		Input: Fixed(10), Output: Fixed(8)})
	if len(items) != P*S {
		t.Fatalf("%d items, want %d", len(items), P*S)
	}
	prefixes := map[int]string{}
	count := map[int]int{}
	suffixes := map[string]bool{}
	inOrder := true
	for i, d := range ds {
		m := d.Synthetic
		w := strings.Fields(d.content())
		if len(w) != L+10 || m.InputTokens != L+10 || m.PrefixTokens != L || m.Prefix < 1 || m.Prefix > P {
			t.Fatalf("%s: %d words, meta %+v", d.CustomID, len(w), m)
		}
		pre := strings.Join(w[:L], " ")
		if p, ok := prefixes[m.Prefix]; ok && p != pre {
			t.Fatalf("%s: prefix %d differs between its items", d.CustomID, m.Prefix)
		}
		prefixes[m.Prefix] = pre
		count[m.Prefix]++
		suffixes[strings.Join(w[L:], " ")] = true
		if i > 0 && ds[i-1].Synthetic.Prefix > m.Prefix {
			inOrder = false
		}
	}
	for p := 1; p <= P; p++ {
		if count[p] != S {
			t.Errorf("prefix %d has %d items, want %d", p, count[p], S)
		}
	}
	distinct := map[string]bool{}
	for _, p := range prefixes {
		distinct[p] = true
	}
	if len(distinct) != P || len(suffixes) != P*S {
		t.Errorf("%d distinct prefixes (want %d), %d distinct suffixes (want %d)", len(distinct), P, len(suffixes), P*S)
	}
	if inOrder {
		t.Error("items are grouped by prefix; they should be shuffled")
	}
}

func TestMultiTurnItems(t *testing.T) {
	t.Parallel()
	_, ds := generate(t, Spec{Kind: KindMultiTurn, Seed: 1, Count: 20, Turns: Dist{Kind: DistUniform, Min: 2, Max: 5}, Input: Fixed(12), Output: Fixed(6)})
	turns := map[string]int{}
	for _, d := range ds {
		m := d.Synthetic
		if m.Conversation == "" || m.Turn != turns[m.Conversation] {
			t.Fatalf("%s: conversation %q turn %d, want turn %d", d.CustomID, m.Conversation, m.Turn, turns[m.Conversation])
		}
		turns[m.Conversation]++
		if len(d.Body.Messages) != 1 || m.InputTokens != 12 {
			t.Fatalf("%s: a turn carries only its own user message: %+v", d.CustomID, d.Body.Messages)
		}
	}
	if len(turns) != 20 {
		t.Fatalf("%d conversations, want 20", len(turns))
	}
	for c, n := range turns {
		if n < 2 || n > 5 {
			t.Errorf("%s has %d turns", c, n)
		}
	}
}

func TestGeneratedTrace(t *testing.T) {
	t.Parallel()
	for _, arrival := range []string{ArrivalConstant, ArrivalPoisson} {
		_, ds := generate(t, Spec{Kind: KindTrace, Arrival: arrival, Seed: 5, Count: 4000, Rate: 20, Input: Fixed(5), Output: Fixed(5)})
		prev := -1.0
		for _, d := range ds {
			at := *d.Synthetic.ArrivalS
			if at < prev {
				t.Fatalf("%s: arrival %v before %v", d.CustomID, at, prev)
			}
			prev = at
		}
		// 3999 gaps of mean 1/20 s.
		if want := 3999.0 / 20; math.Abs(prev-want) > 0.05*want {
			t.Errorf("%s: last arrival %.2f s, want about %.2f", arrival, prev, want)
		}
	}
	_, ds := generate(t, Spec{Kind: KindTrace, Output: Fixed(9), Trace: "{\"timestamp\":0,\"input_length\":3}\n{\"timestamp\":1.5,\"prompt\":\"hello there\",\"output_length\":4}\n"})
	if len(ds) != 2 || *ds[1].Synthetic.ArrivalS != 1.5 || ds[1].content() != "hello there" || ds[1].Body.MaxTokens != 4 ||
		ds[0].Body.MaxTokens != 9 || len(strings.Fields(ds[0].content())) != 3 || ds[1].Synthetic.InputTokens != 0 {
		t.Fatalf("%+v", ds)
	}
}

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	ok := Spec{Count: 10, Input: Fixed(10), Output: Fixed(10)}
	tests := []struct {
		name  string
		edit  func(*Spec)
		field string
	}{
		{"valid", func(*Spec) {}, ""},
		{"unknown kind", func(s *Spec) { s.Kind = "zipf" }, "kind"},
		{"no count", func(s *Spec) { s.Count = 0 }, "count"},
		{"too many", func(s *Spec) { s.Count = MaxItems + 1 }, "count"},
		{"endpoint", func(s *Spec) { s.Endpoint = "embeddings" }, "endpoint"},
		{"no output", func(s *Spec) { s.Output = Dist{} }, "output.dist"},
		{"input NaN", func(s *Spec) { s.Input = Dist{Kind: DistNormal, Mean: math.NaN()} }, "input.mean"},
		{"too many tokens", func(s *Spec) { s.Count = MaxItems; s.Input = Fixed(MaxTokens) }, "input"},
		{"prefix without prefixes", func(s *Spec) { s.Kind = KindSharedPrefix; s.PrefixTokens = 5; s.SuffixesPerPrefix = 2 }, "prefixes"},
		{"prefix too many", func(s *Spec) {
			s.Kind = KindSharedPrefix
			s.Prefixes = 1000
			s.SuffixesPerPrefix = 1000
			s.PrefixTokens = 5
		}, "suffixes_per_prefix"},
		{"prefix length", func(s *Spec) { s.Kind = KindSharedPrefix; s.Prefixes = 2; s.SuffixesPerPrefix = 2 }, "prefix_tokens"},
		{"turns", func(s *Spec) { s.Kind = KindMultiTurn; s.Turns = Fixed(MaxTurns + 1) }, "turns.value"},
		{"turns × count", func(s *Spec) { s.Kind = KindMultiTurn; s.Count = MaxItems; s.Turns = Fixed(2) }, "count"},
		{"trace rate", func(s *Spec) { s.Kind = KindTrace; s.Rate = math.Inf(1) }, "rate"},
		{"trace arrival", func(s *Spec) { s.Kind = KindTrace; s.Rate = 1; s.Arrival = "bursty" }, "arrival"},
		{"trace with count", func(s *Spec) { s.Kind = KindTrace; s.Trace = `{"timestamp":0,"input_length":1}` }, "trace"},
		{"bad trace", func(s *Spec) { s.Kind = KindTrace; s.Count = 0; s.Trace = `{"timestamp":-1,"input_length":1}` }, "trace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			s.Normalize()
			_, errs := s.Validate()
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Path == tc.field {
					return
				}
			}
			t.Fatalf("want an error on %s, got %v", tc.field, errs)
		})
	}
}

// TestSpecRules names, for each kind and field, the path and the words of
// the message a person gets.
func TestSpecRules(t *testing.T) {
	t.Parallel()
	random := Spec{Count: 10, Input: Fixed(10), Output: Fixed(10)}
	prefix := Spec{Kind: KindSharedPrefix, Prefixes: 2, SuffixesPerPrefix: 3, PrefixTokens: 4, Input: Fixed(10), Output: Fixed(10)}
	multi := Spec{Kind: KindMultiTurn, Count: 5, Turns: Fixed(3), Input: Fixed(10), Output: Fixed(10)}
	gen := Spec{Kind: KindTrace, Count: 5, Rate: 2, Input: Fixed(10), Output: Fixed(10)}
	upload := Spec{Kind: KindTrace, Trace: `{"timestamp":0,"input_length":3}`, Output: Fixed(10)}
	tests := []struct {
		name       string
		base       Spec
		edit       func(*Spec)
		path, want string // want: a fragment of the message; path "" = valid
	}{
		{"random", random, func(*Spec) {}, "", ""},
		{"shared-prefix", prefix, func(*Spec) {}, "", ""},
		{"multi-turn", multi, func(*Spec) {}, "", ""},
		{"generated trace", gen, func(*Spec) {}, "", ""},
		{"uploaded trace", upload, func(*Spec) {}, "", ""},
		{"uploaded trace needs no input", upload, func(s *Spec) { s.Input = Dist{Kind: "zipf"} }, "", ""},
		{"shared-prefix ignores count", prefix, func(s *Spec) { s.Count = 0 }, "", ""},
		{"other kinds ignore turns", random, func(s *Spec) { s.Turns = Fixed(MaxTurns + 1) }, "", ""},

		{"kind unknown", random, func(s *Spec) { s.Kind = "zipf" }, "kind", `must be one of random, shared-prefix, multi-turn, trace (got "zipf")`},
		{"endpoint", random, func(s *Spec) { s.Endpoint = "embeddings" }, "endpoint", `must be one of chat, completions (got "embeddings")`},
		{"random count 0", random, func(s *Spec) { s.Count = 0 }, "count", "the number of items, between 1 and 100000"},
		{"multi-turn count 0", multi, func(s *Spec) { s.Count = 0 }, "count", "the number of conversations, between 1 and 100000"},
		{"trace count 0", gen, func(s *Spec) { s.Count = 0 }, "count", "the number of requests, between 1 and 100000"},
		{"count negative", random, func(s *Spec) { s.Count = -1 }, "count", "between 1 and 100000"},
		{"count too many", random, func(s *Spec) { s.Count = MaxItems + 1 }, "count", "between 1 and 100000"},
		{"prefixes missing", prefix, func(s *Spec) { s.Prefixes = 0 }, "prefixes", "between 1 and 1000 shared prefixes"},
		{"prefixes too many", prefix, func(s *Spec) { s.Prefixes = 1001 }, "prefixes", "between 1 and 1000 shared prefixes"},
		{"suffixes missing", prefix, func(s *Spec) { s.SuffixesPerPrefix = 0 }, "suffixes_per_prefix", "between 1 and 100000 prompts per prefix"},
		{"prefix tokens missing", prefix, func(s *Spec) { s.PrefixTokens = 0 }, "prefix_tokens", "the shared prefix's length, between 1 and 131072 tokens"},
		{"prefix tokens too long", prefix, func(s *Spec) { s.PrefixTokens = MaxTokens + 1 }, "prefix_tokens", "between 1 and 131072 tokens"},
		{"prefixes × suffixes", prefix, func(s *Spec) { s.Prefixes, s.SuffixesPerPrefix = 1000, 1000 }, "suffixes_per_prefix", "prefixes × suffixes_per_prefix must be at most 100000 items (got 1000000)"},
		{"turns missing", multi, func(s *Spec) { s.Turns = Dist{} }, "turns.dist", "choose a distribution"},
		{"turns beyond 64", multi, func(s *Spec) { s.Turns = Fixed(MaxTurns + 1) }, "turns.value", "between 1 and 64 (got 65)"},
		{"turns max beyond 64", multi, func(s *Spec) { s.Turns = Dist{Kind: DistUniform, Min: 1, Max: 65} }, "turns.max", "between 0 and 64 (got 65)"},
		{"turns mean beyond 64", multi, func(s *Spec) { s.Turns = Dist{Kind: DistNormal, Mean: 100} }, "turns.mean", "between 1 and 64 (got 100)"},
		{"conversations × turns", multi, func(s *Spec) { s.Count, s.Turns = MaxItems, Fixed(2) }, "count", "conversations × the most turns must be at most 100000 items (got 200000)"},
		{"rate missing", gen, func(s *Spec) { s.Rate = 0 }, "rate", "the trace's mean rate, above 0 and at most 10000"},
		{"rate infinite", gen, func(s *Spec) { s.Rate = math.Inf(1) }, "rate", "must be a finite number"},
		{"rate NaN", gen, func(s *Spec) { s.Rate = math.NaN() }, "rate", "must be a finite number"},
		{"rate too high", gen, func(s *Spec) { s.Rate = MaxRate + 1 }, "rate", "above 0 and at most 10000 requests per second"},
		{"rate negative", gen, func(s *Spec) { s.Rate = -1 }, "rate", "above 0 and at most 10000"},
		{"arrival", gen, func(s *Spec) { s.Arrival = "bursty" }, "arrival", `must be one of poisson, constant (got "bursty")`},
		{"uploaded trace with count", upload, func(s *Spec) { s.Count = 3 }, "trace", "leave count, rate and arrival empty"},
		{"uploaded trace with rate", upload, func(s *Spec) { s.Rate = 3 }, "trace", "leave count, rate and arrival empty"},
		{"uploaded trace with arrival", upload, func(s *Spec) { s.Arrival = ArrivalConstant }, "trace", "leave count, rate and arrival empty"},
		{"uploaded trace line", upload, func(s *Spec) { s.Trace = `{"timestamp":-1,"input_length":1}` }, "trace", "line 1"},
		{"trace sha", random, func(s *Spec) { s.TraceSHA256 = "abc" }, "trace_sha256", "64 hexadecimal digits"},
		{"input", random, func(s *Spec) { s.Input = Fixed(0) }, "input.value", "the length every time, at least 1"},
		{"output", random, func(s *Spec) { s.Output = Dist{} }, "output.dist", "choose a distribution: fixed, uniform, normal or lognormal"},
		{"output too long", random, func(s *Spec) { s.Output = Fixed(MaxTokens + 1) }, "output.value", "between 1 and 131072 (got 131073)"},
		{"prompt tokens in all", random, func(s *Spec) { s.Count, s.Input = MaxItems, Fixed(MaxTokens) }, "input", "the prompts could reach 13107200000 tokens in all; at most 20000000"},
		{"prefix counts in the total", prefix, func(s *Spec) { s.Prefixes, s.SuffixesPerPrefix, s.PrefixTokens = 100, 1000, 1000 }, "input", "could reach 101000000 tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.base
			tc.edit(&s)
			s.Normalize()
			_, errs := s.Validate()
			if tc.path == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Path == tc.path && strings.Contains(e.Message, tc.want) {
					return
				}
			}
			t.Fatalf("want %s: …%s…, got %v", tc.path, tc.want, errs)
		})
	}
}

// FuzzSpecJSON decodes any body as the API and a manifest do, then
// validates it: no panic, every error has a message, and a spec that
// passes generates its items within the bounds.
func FuzzSpecJSON(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"random","count":3,"input":{"dist":"fixed","value":5},"output":{"dist":"uniform","min":1,"max":4}}`,
		`{"kind":"shared-prefix","prefixes":2,"suffixes_per_prefix":2,"prefix_tokens":3,"input":{"dist":"normal","mean":4,"stddev":1},"output":{"dist":"fixed","value":2}}`,
		`{"kind":"multi-turn","count":2,"turns":{"dist":"uniform","min":1,"max":3},"input":{"dist":"lognormal","median":5,"sigma":0.5},"output":{"dist":"fixed","value":2}}`,
		`{"kind":"trace","count":3,"rate":5,"arrival":"constant","input":{"dist":"fixed","value":2},"output":{"dist":"fixed","value":2}}`,
		`{"kind":"trace","trace":"{\"timestamp\":0,\"input_length\":3}\n","output":{"dist":"fixed","value":2}}`,
		`{"kind":"random","count":1e9,"input":{"dist":"fixed","value":-1},"output":{}}`,
		`{"kind":"zipf","input":{"dist":"lognormal","mean":3,"median":3}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var s Spec
		if errs := valid.DecodeJSON(body, &s); errs != nil {
			for _, e := range errs {
				if e.Message == "" {
					t.Fatalf("decode error without a message: %+v", e)
				}
			}
			return
		}
		s.Normalize()
		lines, errs := s.Validate()
		if len(errs) > 0 {
			for _, e := range errs {
				if e.Message == "" || strings.Contains(e.Message, "synth.") {
					t.Fatalf("error %+v", e)
				}
			}
			return
		}
		n := 0
		for it := range s.Items(lines) {
			var d decoded
			if err := json.Unmarshal(it.Line, &d); err != nil {
				t.Fatalf("item %s: %v", it.CustomID, err)
			}
			if m := d.Synthetic; m.OutputTokens < 1 || m.OutputTokens > MaxTokens || m.InputTokens < 0 || m.InputTokens > MaxTokens+MaxTokens {
				t.Fatalf("item %s: lengths %+v", it.CustomID, m)
			}
			if n++; n >= 200 {
				break // enough to see the bounds hold
			}
		}
	})
}
