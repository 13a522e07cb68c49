package judge

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseRating(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text   string
		lo, hi int
		ok     bool
		rating float64
		why    string // part of the reason when not ok
	}{
		{"The answer is right and clear.\n\nRating: [[8]]", 1, 10, true, 8, ""},
		{"Rating: [[10]]", 1, 10, true, 10, ""},
		{"Rating: [[1]]", 1, 10, true, 1, ""},
		{"Good but terse. [[7.5]] overall", 1, 10, true, 7.5, ""},
		// MT-Bench's backup form, single brackets, when no double ones.
		{"I would give it [6] out of 10.", 1, 10, true, 6, ""},
		// The double-bracket form wins over an earlier single bracket.
		{"Step [2] is wrong. Rating: [[3]]", 1, 10, true, 3, ""},
		// The first rating counts, as in MT-Bench.
		{"Rating: [[4]] ... on reflection Rating: [[9]]", 1, 10, true, 4, ""},
		{"Rating: [[0]]", 0, 5, true, 0, ""},
		{"Rating: [[11]]", 1, 10, false, 0, "outside the scale"},
		{"Rating: [[0]]", 1, 10, false, 0, "outside the scale"},
		{"Rating: [[-3]]", 1, 10, false, 0, "no rating"},
		{"Rating: [[ 7 ]]", 1, 10, false, 0, "no rating"},
		{"Rating: 7/10", 1, 10, false, 0, "no rating"},
		{"", 1, 10, false, 0, "no rating"},
		{"ụ̈ gibberish tokens ▁▁ [[A]]", 1, 10, false, 0, "no rating"},
	} {
		r := ParseRating(tc.text, tc.lo, tc.hi)
		if r.OK != tc.ok || (tc.ok && r.Rating != tc.rating) || (!tc.ok && !strings.Contains(r.Why, tc.why)) {
			t.Errorf("ParseRating(%q, %d, %d) = %+v; want ok %v rating %v why ~%q", tc.text, tc.lo, tc.hi, r, tc.ok, tc.rating, tc.why)
		}
		if tc.ok && r.Score != Normalise(tc.rating, tc.lo, tc.hi) {
			t.Errorf("ParseRating(%q): score %v, want %v", tc.text, r.Score, Normalise(tc.rating, tc.lo, tc.hi))
		}
	}
	// The rationale is the answer without its verdict line.
	r := ParseRating("The answer misses the second step.\n\nRating: [[4]]", 1, 10)
	if r.Rationale != "The answer misses the second step." {
		t.Errorf("rationale %q", r.Rationale)
	}
}

func TestNormalise(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r      float64
		lo, hi int
		want   float64
	}{
		{1, 1, 10, 0}, {10, 1, 10, 1}, {5.5, 1, 10, 0.5}, {8, 1, 10, 7.0 / 9}, {3, 0, 5, 0.6}, {50, 0, 100, 0.5}, {2, 1, 3, 0.5},
	} {
		if got := Normalise(tc.r, tc.lo, tc.hi); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Normalise(%v, %d, %d) = %v, want %v", tc.r, tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestParsePair(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text    string
		ok      bool
		verdict string
	}{
		{"A explains the steps; B skips them.\n[[A]]", true, A},
		{"[[B]]", true, B},
		{"Both are equally good. [[C]]", true, Tie},
		{"My verdict: [[A]]. To repeat: [[A]]", true, A},
		// Two different verdicts: ambiguous, not read in A's favour.
		{"[[A]] if A is better... I pick [[B]]", false, ""},
		{"A is better.", false, ""},
		{"[A]", false, ""},
		{"[[D]]", false, ""},
		{"", false, ""},
	} {
		p := ParsePair(tc.text)
		if p.OK != tc.ok || p.Verdict != tc.verdict {
			t.Errorf("ParsePair(%q) = %+v; want ok %v verdict %q", tc.text, p, tc.ok, tc.verdict)
		}
	}
}

// The two orders, both already from the first run's side.
func TestReconcile(t *testing.T) {
	t.Parallel()
	ok := func(v string) Pair { return Pair{OK: true, Verdict: v} }
	bad := Pair{Why: "no verdict"}
	for _, tc := range []struct {
		name                   string
		ab, ba                 Pair
		verdict                string
		inconsistent, unparsed bool
	}{
		{"both A", ok(A), ok(A), A, false, false},
		{"both B", ok(B), ok(B), B, false, false},
		{"both tie", ok(Tie), ok(Tie), Tie, false, false},
		{"A then B: position bias", ok(A), ok(B), Tie, true, false},
		{"B then A", ok(B), ok(A), Tie, true, false},
		{"A then tie", ok(A), ok(Tie), Tie, true, false},
		{"tie then B", ok(Tie), ok(B), Tie, true, false},
		{"first unreadable", bad, ok(A), "", false, true},
		{"second unreadable", ok(B), bad, "", false, true},
		{"both unreadable", bad, bad, "", false, true},
	} {
		got := Reconcile(tc.ab, tc.ba)
		if got.Verdict != tc.verdict || got.Inconsistent != tc.inconsistent || got.Unparsed != tc.unparsed || got.Why == "" {
			t.Errorf("%s: Reconcile = %+v; want verdict %q inconsistent %v unparsed %v and a reason", tc.name, got, tc.verdict, tc.inconsistent, tc.unparsed)
		}
		if tc.inconsistent && !strings.Contains(got.Why, "inconsistent") {
			t.Errorf("%s: the reason %q does not say the orders disagreed", tc.name, got.Why)
		}
	}
	// A verdict given with the second run first is turned to the first's side.
	if Swap(A) != B || Swap(B) != A || Swap(Tie) != Tie {
		t.Error("Swap does not exchange A and B")
	}
}

func TestCheckTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, tmpl string
		err        string // "" for accepted; else part of the message
	}{
		{Single, "Q: {{question}}\nA: {{answer}}\nRef: {{reference}}", ""},
		{Single, "Grade this: {{ answer }}", ""},
		{Pairwise, "{{question}}\n1: {{answer_a}}\n2: {{answer_b}}", ""},
		{Single, "Q: {{question}} A: {{answer}} {{context}} {{answr}}", "unknown placeholders {{context}}, {{answr}}"},
		{Single, "{{answer_a}} {{answer}}", "unknown placeholder {{answer_a}}"},
		{Pairwise, "{{answer}} {{answer_a}} {{answer_b}}", "unknown placeholder {{answer}}"},
		{Single, "Q: {{question}}", "add {{answer}}"},
		{Pairwise, "{{answer_a}} only", "add {{answer_b}}"},
		{Single, "{{answer}} and {{question", "not closed"},
		{Single, "{{answer}} }} stray", "not closed"},
		{Single, "   ", "empty"},
		{Single, "{{answer}}" + strings.Repeat("x", MaxTemplateBytes), "at most"},
		{Single, "{{answer}}\x00", "NUL"},
		{Single, "{{answer}}\xff", "UTF-8"},
		{"triple", "{{answer}}", "mode"},
	} {
		err := CheckTemplate(tc.mode, tc.tmpl)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("CheckTemplate(%s, %.60q): %v; want accepted", tc.mode, tc.tmpl, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("CheckTemplate(%s, %.60q) = %v; want an error with %q", tc.mode, tc.tmpl, err, tc.err)
		}
	}
	for _, r := range Rubrics("") {
		if err := CheckTemplate(r.Mode, r.Template); err != nil {
			t.Errorf("shipped rubric %s: %v", r.Name, err)
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	got := Render("Q: {{question}}\nA: {{ answer }}\nR: {{reference}}", map[string]string{
		PQuestion: "What is {{answer}}?", PAnswer: "42", PReference: "42",
	})
	// A placeholder inside a value is text, not filled again.
	if want := "Q: What is {{answer}}?\nA: 42\nR: 42"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	r, _ := RubricByName("pairwise")
	out := Render(r.Template, map[string]string{PQuestion: "q", PAnswerA: "first", PAnswerB: "second"})
	if strings.Contains(out, "{{") || strings.Index(out, "first") > strings.Index(out, "second") {
		t.Errorf("pairwise render: %q", out)
	}
}

func TestSystemPromptsAskForTheVerdictTheParsersRead(t *testing.T) {
	t.Parallel()
	s := SystemPrompt(Single, "how correct it is.", 1, 10)
	if !strings.Contains(s, "[[N]]") || !strings.Contains(s, "from 1 (worst) to 10 (best)") {
		t.Errorf("single system prompt: %s", s)
	}
	p := SystemPrompt(Pairwise, "which is better.", 1, 10)
	for _, m := range []string{"[[A]]", "[[B]]", "[[C]]"} {
		if !strings.Contains(p, m) {
			t.Errorf("pairwise system prompt lacks %s: %s", m, p)
		}
	}
	// The simulated judge's answers read back as what they say: the
	// simulated model's right or wrong when known (whatever the words),
	// else the token F1 against the reference.
	yes, no := true, false
	for _, tc := range []struct {
		answer, ref string
		right       *bool
		want        int
	}{
		{"Paris", "Paris", nil, 10},
		{"Lyon", "Paris", nil, 1},
		{"The city of Paris", "Paris", &yes, 10},
		{"Paris, or perhaps Lyon", "Paris", &no, 1},
		{"Paris", "Paris", &no, 1},
	} {
		if r := ParseRating(SimRating(tc.answer, tc.ref, tc.right, 1, 10), 1, 10); !r.OK || r.Rating != float64(tc.want) {
			t.Errorf("sim rating of %q against %q (right %v): %+v, want %d", tc.answer, tc.ref, tc.right, r, tc.want)
		}
	}
	// Without a reference (creativity, safety) the rating is fixed by the
	// answer's text, whatever right says.
	free := SimRating("A poem about the sea.", "", &yes, 1, 10)
	if free != SimRating("A poem about the sea.", "", nil, 1, 10) || free != SimRating("A poem about the sea.", "", &no, 1, 10) {
		t.Errorf("sim rating without a reference depends on right: %q", free)
	}
	if p := ParsePair(SimPair("Lyon", "Paris", "Paris", nil, nil)); p.Verdict != B {
		t.Errorf("sim pair: %+v", p)
	}
	for _, tc := range []struct {
		a, b *bool
		want string
	}{{&yes, &no, A}, {&no, &yes, B}, {&yes, &yes, Tie}, {&no, &no, Tie}} {
		if p := ParsePair(SimPair("Paris", "Paris", "Paris", tc.a, tc.b)); p.Verdict != tc.want {
			t.Errorf("sim pair with right %v and %v: %+v, want %s", *tc.a, *tc.b, p, tc.want)
		}
	}
}

func TestQuestionAndRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ req, want string }{
		{`{"url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"Hi?"}]}}`, "Hi?"},
		{`{"url":"/v1/completions","body":{"prompt":"Once upon"}}`, "Once upon"},
		{`{"body":{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Sum"}]}]}}`, "system: Be brief.\n\nuser: Sum"},
		{`not json`, ""},
	} {
		if got := Question(json.RawMessage(tc.req)); got != tc.want {
			t.Errorf("Question(%s) = %q, want %q", tc.req, got, tc.want)
		}
	}
	b, err := Request("sys", "user text")
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		URL  string `json:"url"`
		Body struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		} `json:"body"`
	}
	if err := json.Unmarshal(b, &req); err != nil || req.URL != "/v1/chat/completions" || len(req.Body.Messages) != 2 ||
		req.Body.Messages[1].Content != "user text" {
		t.Errorf("Request = %s (%v)", b, err)
	}
	long := strings.Repeat("é", MaxFieldBytes)
	if c := Clip(long); len(c) > MaxFieldBytes+64 || !utf8.ValidString(c) || !strings.Contains(c, "cut") {
		t.Errorf("Clip kept %d bytes (valid %v)", len(c), utf8.ValidString(c))
	}
}

// Whatever a judge answers, reading it neither panics nor yields a score
// outside [0, 1], a rating off the scale, or text PostgreSQL cannot store.
func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{"Rating: [[7]]", "[[A]]", "[3.5]", "[[C]] [[C]]", "[[99999999999999999999999]]", "\xff[[2]]", "Rating: [[1e5]]", ""} {
		f.Add(s, 1, 10)
	}
	f.Fuzz(func(t *testing.T, text string, lo, hi int) {
		if lo < MinScale || hi > MaxScale || lo >= hi {
			return
		}
		r := ParseRating(text, lo, hi)
		if r.OK && (r.Score < 0 || r.Score > 1 || r.Rating < float64(lo) || r.Rating > float64(hi) || math.IsNaN(r.Score)) {
			t.Fatalf("ParseRating(%q, %d, %d) = %+v", text, lo, hi, r)
		}
		if !r.OK && r.Why == "" {
			t.Fatalf("ParseRating(%q): unparseable without a reason", text)
		}
		p := ParsePair(text)
		if p.OK != (p.Verdict == A || p.Verdict == B || p.Verdict == Tie) {
			t.Fatalf("ParsePair(%q) = %+v", text, p)
		}
		for _, s := range []string{r.Rationale, p.Rationale, ClipRaw(text)} {
			if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxRationaleRunes+1 && s != ClipRaw(text) {
				t.Fatalf("stored text not bounded UTF-8: %q", s)
			}
		}
		if len(ClipRaw(text)) > MaxRawBytes {
			t.Fatalf("ClipRaw kept %d bytes", len(ClipRaw(text)))
		}
	})
}

// Whatever template a user writes, checking it never panics, and a
// template that passes renders with no placeholder left.
func FuzzCheckTemplate(f *testing.F) {
	for _, s := range []string{"{{question}} {{answer}}", "{{answer_a}}{{answer_b}}", "{{", "{{ }}", "{{answer}}{{x}}"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, tmpl string, single bool) {
		mode := Pairwise
		if single {
			mode = Single
		}
		if CheckTemplate(mode, tmpl) != nil {
			return
		}
		out := Render(tmpl, map[string]string{PQuestion: "q", PAnswer: "a", PAnswerA: "a", PAnswerB: "b", PReference: "r"})
		if placeholder.MatchString(out) {
			t.Fatalf("Render(%q) left a placeholder: %q", tmpl, out)
		}
	})
}

// The creative-writing and safety rubrics grade one answer each, need no
// reference (their starter sets have none), and their templates are ones
// a user could have written.
func TestCreativityAndSafetyRubrics(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"creativity-originality", "creativity-coherence", "creativity-style",
		"safety-harmful-compliance", "safety-refusal-appropriateness"} {
		r, ok := RubricByName(name)
		if !ok || r.Mode != Single || r.NeedsReference() || r.Criteria == "" {
			t.Errorf("rubric %q: %+v", name, r)
			continue
		}
		if err := CheckTemplate(Single, r.Template); err != nil {
			t.Errorf("rubric %q: %v", name, err)
		}
		if !strings.Contains(SystemPrompt(Single, r.Criteria, 1, 10), "Rating: [[N]]") {
			t.Errorf("rubric %q: the system prompt does not ask for the verdict the parser reads", name)
		}
	}
}
