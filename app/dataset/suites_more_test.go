package dataset_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
)

// moreVectors is testdata/suites_more_expected.json: 250 seeded random
// documents per suite in its published shape, with what
// lm-evaluation-harness's own task code makes of them (see its "source").
type moreVectors struct {
	WinoGrande []struct {
		Doc     json.RawMessage
		Prompt  string
		Answer  string
		Choices []string
	}
	OpenBookQA []struct {
		Doc    json.RawMessage
		Prompt string
		Answer string
	}
	TriviaQA []struct {
		Doc             json.RawMessage
		Prompt          string
		TargetDelimiter string `json:"target_delimiter"`
		FewshotTarget   string `json:"fewshot_target"`
		Until           []string
	}
	NQOpen []struct {
		Doc              json.RawMessage
		Prompt           string
		FewshotDelimiter string `json:"fewshot_delimiter"`
		Until            []string
	} `json:"nq_open"`
	CodeXGLUE []struct {
		Doc       json.RawMessage
		Input     string
		Reference string
	}
}

func loadMoreVectors(t *testing.T) moreVectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/suites_more_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var v moreVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"winogrande": len(v.WinoGrande), "openbookqa": len(v.OpenBookQA), "triviaqa": len(v.TriviaQA),
		"nq_open": len(v.NQOpen), "codexglue": len(v.CodeXGLUE)} {
		if n < 200 {
			t.Fatalf("%s: %d vectors, want at least 200", name, n)
		}
	}
	return v
}

// jsonl joins documents into a file.
func jsonl(docs []json.RawMessage) []byte {
	var b bytes.Buffer
	for _, d := range docs {
		_ = json.Compact(&b, d)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// parsed parses docs zero-shot and checks the file's format, default
// scorer and task kind.
func parsed(t *testing.T, docs []json.RawMessage, k int, format dataset.Format, scorer, kind string) []dataset.Item {
	t.Helper()
	items, p := suiteItems(t, jsonl(docs), k)
	if p.ErrorCount() != 0 || len(items) != len(docs) {
		t.Fatalf("%s: %d of %d items, errors %v", format, len(items), len(docs), p.Errors())
	}
	if p.Format() != format || p.SuggestedScorer() != scorer || p.TaskKind() != kind {
		t.Errorf("%s: detected %q, scorer %q, kind %q; want %q %q", format, p.Format(), p.SuggestedScorer(), p.TaskKind(), scorer, kind)
	}
	return items
}

// TestMoreSuitesMatchLMEval checks every prompt, choice and answer of
// the five suites against lm-evaluation-harness's own code.
func TestMoreSuitesMatchLMEval(t *testing.T) {
	t.Parallel()
	v := loadMoreVectors(t)
	type refT struct {
		Answer  json.RawMessage `json:"answer"`
		Choices []string        `json:"choices"`
		Aliases []string        `json:"aliases"`
	}
	ref := func(it dataset.Item) refT {
		var r refT
		if err := json.Unmarshal(it.Reference, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	answers := func(r refT) []string {
		var out []string
		if json.Unmarshal(r.Answer, &out) != nil {
			var s string
			_ = json.Unmarshal(r.Answer, &s)
			out = []string{s}
		}
		return out
	}
	agree := map[string]int{}

	docs := docsOf(v.WinoGrande, func(i int) json.RawMessage { return v.WinoGrande[i].Doc })
	for i, it := range parsed(t, docs, 0, dataset.FormatWinoGrande, "choice", "multiple-choice") {
		c, r := v.WinoGrande[i], ref(it)
		prompt, url, _ := promptOf(t, it.Request)
		if prompt != c.Prompt || url != "/v1/chat/completions" || answers(r)[0] != c.Answer || !slices.Equal(r.Choices, c.Choices) {
			t.Errorf("winogrande %d: prompt %q answer %s choices %q\nwant %q answer %s choices %q", i, prompt, r.Answer, r.Choices, c.Prompt, c.Answer, c.Choices)
			continue
		}
		agree["winogrande"]++
	}

	docs = docsOf(v.OpenBookQA, func(i int) json.RawMessage { return v.OpenBookQA[i].Doc })
	for i, it := range parsed(t, docs, 0, dataset.FormatOpenBookQA, "choice", "multiple-choice") {
		c, r := v.OpenBookQA[i], ref(it)
		prompt, _, _ := promptOf(t, it.Request)
		var id struct{ ID string }
		_ = json.Unmarshal(c.Doc, &id)
		if prompt != c.Prompt || answers(r)[0] != c.Answer || it.CustomID != id.ID {
			t.Errorf("openbookqa %d: prompt %q answer %s id %q\nwant %q answer %s id %q", i, prompt, r.Answer, it.CustomID, c.Prompt, c.Answer, id.ID)
			continue
		}
		agree["openbookqa"]++
	}

	docs = docsOf(v.TriviaQA, func(i int) json.RawMessage { return v.TriviaQA[i].Doc })
	items := parsed(t, docs, 0, dataset.FormatTriviaQA, "triviaqa-em", "qa")
	shot1 := parsed(t, docs, 1, dataset.FormatTriviaQA, "triviaqa-em", "qa")
	for i, it := range items {
		c, r := v.TriviaQA[i], ref(it)
		var d struct {
			QuestionID string `json:"question_id"`
			Answer     struct {
				Aliases           []string `json:"aliases"`
				NormalizedAliases []string `json:"normalized_aliases"`
			}
		}
		_ = json.Unmarshal(c.Doc, &d)
		truths := d.Answer.NormalizedAliases
		if truths == nil {
			truths = d.Answer.Aliases
		}
		prompt, url, stop := promptOf(t, it.Request)
		// One shot: the first item is every later item's example (the
		// second is the first's), as the target and fewshot delimiters join.
		ex := 0
		if i == 0 {
			ex = 1
		}
		want1 := v.TriviaQA[ex].Prompt + c.TargetDelimiter + v.TriviaQA[ex].FewshotTarget + "\n\n" + c.Prompt
		got1, _, _ := promptOf(t, shot1[i].Request)
		if prompt != c.Prompt || url != "/v1/completions" || !slices.Equal(stop, c.Until) || !slices.Equal(answers(r), truths) ||
			!slices.Equal(r.Aliases, d.Answer.Aliases) || it.CustomID != d.QuestionID || got1 != want1 {
			t.Errorf("triviaqa %d: prompt %q url %s stop %q truths %q id %q 1-shot %q\nwant %q stop %q truths %q id %q 1-shot %q",
				i, prompt, url, stop, answers(r), it.CustomID, got1, c.Prompt, c.Until, truths, d.QuestionID, want1)
			continue
		}
		agree["triviaqa"]++
	}

	docs = docsOf(v.NQOpen, func(i int) json.RawMessage { return v.NQOpen[i].Doc })
	items = parsed(t, docs, 0, dataset.FormatNQOpen, "triviaqa-em", "qa")
	shot1 = parsed(t, docs, 1, dataset.FormatNQOpen, "triviaqa-em", "qa")
	const desc = "Answer these questions:\n\n"
	for i, it := range items {
		c, r := v.NQOpen[i], ref(it)
		var d struct{ Answer []string }
		_ = json.Unmarshal(c.Doc, &d)
		prompt, url, stop := promptOf(t, it.Request)
		ex := 0
		if i == 0 {
			ex = 1
		}
		// The description once, then the example, the fewshot delimiter "\n".
		want1 := desc + strings.TrimPrefix(v.NQOpen[ex].Prompt, desc) + " " + nqAnswer(t, v.NQOpen[ex].Doc) + c.FewshotDelimiter + strings.TrimPrefix(c.Prompt, desc)
		got1, _, _ := promptOf(t, shot1[i].Request)
		if prompt != c.Prompt || url != "/v1/completions" || !slices.Equal(stop, c.Until) || !slices.Equal(answers(r), d.Answer) || got1 != want1 {
			t.Errorf("nq_open %d: prompt %q stop %q answers %q 1-shot %q\nwant %q stop %q answers %q 1-shot %q", i, prompt, stop, answers(r), got1, c.Prompt, c.Until, d.Answer, want1)
			continue
		}
		agree["nq_open"]++
	}

	docs = docsOf(v.CodeXGLUE, func(i int) json.RawMessage { return v.CodeXGLUE[i].Doc })
	for i, it := range parsed(t, docs, 0, dataset.FormatCodeXGLUE, "codexglue-bleu", "summarization") {
		c, r := v.CodeXGLUE[i], ref(it)
		var d struct{ Language string }
		_ = json.Unmarshal(c.Doc, &d)
		prompt, _, _ := promptOf(t, it.Request)
		want := "Summarize what this " + d.Language + " function does in one sentence, as the first line of its documentation would.\n\n" + c.Input + "\nSummary:"
		if prompt != want || answers(r)[0] != c.Reference || it.Category != d.Language {
			t.Errorf("codexglue %d: prompt %q reference %s category %q\nwant %q reference %q", i, prompt, r.Answer, it.Category, want, c.Reference)
			continue
		}
		agree["codexglue"]++
	}
	t.Logf("agreeing with lm-evaluation-harness: %v", agree)
}

// docsOf lists the documents of a suite's vectors.
func docsOf[T any](cases []T, doc func(int) json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(cases))
	for i := range cases {
		out[i] = doc(i)
	}
	return out
}

// nqAnswer is an NQ open document's first answer, lm-eval's few-shot
// target for a list.
func nqAnswer(t *testing.T, doc json.RawMessage) string {
	t.Helper()
	var d struct{ Answer []string }
	if err := json.Unmarshal(doc, &d); err != nil || len(d.Answer) == 0 {
		t.Fatalf("%s: %v", doc, err)
	}
	return d.Answer[0]
}
