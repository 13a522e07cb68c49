package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
)

// testdata/fewshot_gsm8k_lmeval.json holds GSM8K k-shot prompts made by
// lm-evaluation-harness's own code (see its "source"): tasks/gsm8k's
// gsm8k.yaml templates through ConfigurableTask's fewshot_context,
// build_qa_turn, doc_to_text and doc_to_target, api/utils.py's Message
// and api/samplers.py's seeded default sampler, the few-shot split the
// evaluated one (the item removed), over the first 30 items of the GSM8K
// test split (seeds 1234, 7 and 2⁴⁰+3; k 5, 3 and 1) and 8 further ones
// (k 5: random.sample's other strategy). Ruckus's prompts and stops must
// be the same, byte for byte, item after item.
func TestGSM8KFewShotPromptsAreLMEvalsOwn(t *testing.T) {
	t.Parallel()
	v := readLMEvalVectors(t, "testdata/fewshot_gsm8k_lmeval.json")
	var until []string
	if err := json.Unmarshal(v["gsm8k_until"], &until); err != nil {
		t.Fatal(err)
	}
	sets := map[string][]dataset.Shot{"gsm8k": shotsOfDocs(t, v["gsm8k_docs"]), "gsm8k_small": shotsOfDocs(t, v["gsm8k_small_docs"])}
	checked, cases := 0, 0
	for key, raw := range v {
		parts := strings.Split(key, "/")
		if len(parts) != 3 || sets[parts[0]] == nil {
			continue
		}
		shots := sets[parts[0]]
		k, _ := strconv.Atoi(parts[1])
		seed, _ := strconv.ParseInt(parts[2], 10, 64)
		var want []string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		ex, err := FewShotExamples(shots, len(shots), k, seed, false)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		cases++
		for i, w := range want {
			examples := make([]dataset.Shot, len(ex[i]))
			for j, e := range ex[i] {
				if e == i {
					t.Fatalf("%s item %d is its own example", key, i)
				}
				examples[j] = shots[e]
			}
			content, stop := chatContent(t, dataset.FewShotRequest(shots[i], examples))
			if content != w {
				t.Errorf("%s item %d:\n%q\nwant\n%q", key, i, content, w)
				continue
			}
			if !slices.Equal(stop, until) {
				t.Fatalf("%s item %d: stop %q, lm-eval's until %q", key, i, stop, until)
			}
			checked++
		}
	}
	if cases < 5 || checked < 100 {
		t.Fatalf("%d settings, %d prompts checked", cases, checked)
	}
	t.Logf("%d settings, %d GSM8K prompts equal to lm-eval's", cases, checked)
}

// TestGSM8KFiveShotPrompt shows one whole GSM8K 5-shot prompt as a
// person reads it: lm-eval's gsm8k layout, the full worked answers.
func TestGSM8KFiveShotPrompt(t *testing.T) {
	t.Parallel()
	docs := `{"question":"Q1?","answer":"1 + 1 = <<1+1=2>>2\n#### 2"}
{"question":"Q2?","answer":"#### 1,000"}
{"question":"Q3?","answer":"x\n#### 3"}
{"question":"Q4?","answer":"#### 4"}
{"question":"Q5?","answer":"#### 5"}
{"question":"Janet’s ducks lay 16 eggs per day. How many?","answer":"#### 16"}`
	shots := shotsOfLines(t, docs)
	content, stop := chatContent(t, dataset.FewShotRequest(shots[5], shots[:5]))
	want := "Question: Q1?\nAnswer: 1 + 1 = <<1+1=2>>2\n#### 2\n\n" +
		"Question: Q2?\nAnswer: #### 1,000\n\n" +
		"Question: Q3?\nAnswer: x\n#### 3\n\n" +
		"Question: Q4?\nAnswer: #### 4\n\n" +
		"Question: Q5?\nAnswer: #### 5\n\n" +
		"Question: Janet’s ducks lay 16 eggs per day. How many?\nAnswer:"
	if content != want {
		t.Fatalf("prompt\n%s\nwant\n%s", content, want)
	}
	if !slices.Equal(stop, []string{"Question:", "</s>", "<|im_end|>"}) {
		t.Fatalf("stop %q", stop)
	}
}

// TestPlainFewShotPrompt: a simple prompt/reference upload's k-shot
// prompt is the documented "Question: …\nAnswer: …" form
// (docs/quality.md#few-shot-on-gsm8k-and-on-any-prompt-with-a-reference);
// lines without a reference, with choices or with a conversation have no
// pieces.
func TestPlainFewShotPrompt(t *testing.T) {
	t.Parallel()
	shots := shotsOfLines(t, `{"prompt":"Capital of France?","reference":"Paris"}
{"prompt":"2+2?","answer":4}
{"prompt":"Largest planet?","reference":"Jupiter","category":"space"}`)
	content, stop := chatContent(t, dataset.FewShotRequest(shots[2], shots[:2]))
	want := "Question: Capital of France?\nAnswer: Paris\n\nQuestion: 2+2?\nAnswer: 4\n\nQuestion: Largest planet?\nAnswer:"
	if content != want || !slices.Equal(stop, []string{"Question:"}) {
		t.Fatalf("prompt %q stop %q\nwant %q", content, stop, want)
	}
	p := dataset.NewParser(strings.NewReader(`{"prompt":"no reference"}
{"prompt":"choices","choices":["a","b"],"label":0}
{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"reference":"x"}`), dataset.Limits{})
	for {
		it, ok := p.Next()
		if !ok {
			break
		}
		if s := dataset.ShotOf(p.Format(), it.Request, it.Reference); s != nil {
			t.Errorf("item %d has pieces %+v", it.Index, s)
		}
	}
}

// readLMEvalVectors reads a file of vectors lm-eval produced.
func readLMEvalVectors(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// shotsOfDocs parses a JSON array of documents as an upload.
func shotsOfDocs(t *testing.T, raw json.RawMessage) []dataset.Shot {
	t.Helper()
	var docs []json.RawMessage
	if err := json.Unmarshal(raw, &docs); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, d := range docs {
		if err := json.Compact(&b, d); err != nil {
			t.Fatal(err)
		}
		b.WriteByte('\n')
	}
	shots := shotsOfLines(t, b.String())
	if len(shots) != len(docs) {
		t.Fatalf("%d of %d items", len(shots), len(docs))
	}
	return shots
}

// shotsOfLines parses JSON lines and returns every item's pieces as the
// benchmark service reads them back from the stored request and reference.
func shotsOfLines(t *testing.T, lines string) []dataset.Shot {
	t.Helper()
	p := dataset.NewParser(strings.NewReader(lines), dataset.Limits{})
	var shots []dataset.Shot
	for {
		it, ok := p.Next()
		if !ok {
			break
		}
		s := dataset.ShotOf(p.Format(), it.Request, it.Reference)
		if s == nil || it.Shot != nil {
			t.Fatalf("item %d (%s): pieces %+v, kept %s", it.Index, p.Format(), s, it.Shot)
		}
		shots = append(shots, *s)
	}
	if p.ErrorCount() > 0 {
		t.Fatalf("%v", p.Errors())
	}
	return shots
}

// chatContent is a chat request's one message and its stops.
func chatContent(t *testing.T, req []byte) (string, []string) {
	t.Helper()
	var r struct {
		URL  string `json:"url"`
		Body struct {
			Messages []struct{ Content string } `json:"messages"`
			Stop     []string                   `json:"stop"`
		} `json:"body"`
	}
	if err := json.Unmarshal(req, &r); err != nil || len(r.Body.Messages) != 1 || r.URL != "/v1/chat/completions" {
		t.Fatalf("request %s: %v", req, err)
	}
	return r.Body.Messages[0].Content, r.Body.Stop
}

// A GSM8K file uploaded with exemplars gsm8k-cot is asked as lm-eval's
// gsm8k_cot asks it: its 8 fixed chain-of-thought exemplars ("Q: …\nA: …
// The answer is 6."), then "Q: {question}\nA:", with its stops; the
// prompts and stops lm-eval's own code made for the first 10 test items.
func TestGSM8KCoTExemplarsAreLMEvalsOwn(t *testing.T) {
	t.Parallel()
	v := readLMEvalVectors(t, "testdata/fewshot_gsm8k_lmeval.json")
	var want, until []string
	var samples []dataset.Exemplar
	for key, into := range map[string]any{"gsm8k_cot/8": &want, "gsm8k_cot_until": &until, "gsm8k_cot_samples": &samples} {
		if err := json.Unmarshal(v[key], into); err != nil {
			t.Fatal(key, err)
		}
	}
	set, ok := dataset.Exemplars("gsm8k-cot")
	if !ok || !slices.Equal(set.Examples, samples) || !slices.Equal(set.Stop, until) {
		t.Fatalf("the gsm8k-cot set is not lm-eval's: %+v", set)
	}
	var docs []json.RawMessage
	if err := json.Unmarshal(v["gsm8k_docs"], &docs); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, d := range docs[:len(want)] {
		if err := json.Compact(&b, d); err != nil {
			t.Fatal(err)
		}
		b.WriteByte('\n')
	}
	p := dataset.NewParserWith(&b, dataset.Limits{}, dataset.Options{Exemplars: "gsm8k-cot"})
	n := 0
	for it, ok := p.Next(); ok; it, ok = p.Next() {
		content, stop := chatContent(t, it.Request)
		if content != want[it.Index] || !slices.Equal(stop, until) {
			t.Errorf("item %d:\n%q\nwant\n%q\nstop %q", it.Index, content, want[it.Index], stop)
		}
		n++
	}
	if n != len(want) || p.ErrorCount() > 0 {
		t.Fatalf("%d of %d items, %v", n, len(want), p.Errors())
	}
	// Files whose items keep no bare question are refused whole.
	p = dataset.NewParserWith(strings.NewReader(`{"question":"q","choices":["a","b","c","d"],"answer":1,"subject":"s"}`), dataset.Limits{}, dataset.Options{Exemplars: "gsm8k-cot"})
	for _, ok := p.Next(); ok; _, ok = p.Next() {
	}
	if errs := p.Errors(); len(errs) != 1 || errs[0].Line != 0 || !strings.Contains(errs[0].Message, "this file is mmlu") {
		t.Fatalf("exemplars on MMLU: %+v", errs)
	}
}
