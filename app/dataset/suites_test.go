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

// suiteItems parses input with k shots and returns the items in index
// order (k-shot items come out as their examples become known).
func suiteItems(t *testing.T, input []byte, k int) ([]dataset.Item, *dataset.Parser) {
	t.Helper()
	p := dataset.NewParserWith(bytes.NewReader(input), dataset.Limits{}, dataset.Options{Shots: k})
	var items []dataset.Item
	for {
		it, ok := p.Next()
		if !ok {
			break
		}
		if !json.Valid(it.Request) || !json.Valid(it.Reference) {
			t.Fatalf("line %d: invalid JSON out: %s / %s", it.Line, it.Request, it.Reference)
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b dataset.Item) int { return a.Index - b.Index })
	for i, it := range items {
		if it.Index != i {
			t.Fatalf("indexes %v are not 0..n-1", items)
		}
	}
	return items, p
}

// promptOf is what the model is sent: the chat message or the
// completions prompt.
func promptOf(t *testing.T, req json.RawMessage) (prompt, url string, stop []string) {
	t.Helper()
	var r struct {
		URL  string `json:"url"`
		Body struct {
			Prompt   string   `json:"prompt"`
			Stop     []string `json:"stop"`
			Messages []struct {
				Role, Content string
			} `json:"messages"`
		} `json:"body"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		t.Fatal(err)
	}
	if r.URL == "/v1/completions" {
		return r.Body.Prompt, r.URL, r.Body.Stop
	}
	if len(r.Body.Messages) != 1 || r.Body.Messages[0].Role != "user" {
		t.Fatalf("request %s: want one user message", req)
	}
	return r.Body.Messages[0].Content, r.URL, nil
}

// TestSuitesMatchLMEvalTemplates parses each suite's fixture zero- and
// 2-shot and compares every prompt with the one rendered from
// lm-evaluation-harness's templates (testdata/gen_suites.py).
func TestSuitesMatchLMEvalTemplates(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/suites_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]struct {
		Prompt, Answer, Category string
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	formats := map[string]struct {
		format      dataset.Format
		scorer      string
		kind        string
		completions bool
	}{
		"mmlu.jsonl":       {dataset.FormatMMLU, "choice", "multiple-choice", false},
		"arc.jsonl":        {dataset.FormatARC, "choice", "multiple-choice", false},
		"arc_hf.jsonl":     {dataset.FormatARC, "choice", "multiple-choice", false},
		"hellaswag.jsonl":  {dataset.FormatHellaSwag, "choice", "multiple-choice", false},
		"truthfulqa.jsonl": {dataset.FormatTruthfulQA, "choice", "multiple-choice", false},
		"mbpp.jsonl":       {dataset.FormatMBPP, "mbpp", "code", true},
	}
	for file, f := range formats {
		input, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{0, 2} {
			items, p := suiteItems(t, input, k)
			if p.ErrorCount() != 0 {
				t.Fatalf("%s %d-shot: %v", file, k, p.Errors())
			}
			if p.Format() != f.format || p.SuggestedScorer() != f.scorer || p.TaskKind() != f.kind {
				t.Errorf("%s: format %q scorer %q kind %q", file, p.Format(), p.SuggestedScorer(), p.TaskKind())
			}
			exp := want[file+"/"+string(rune('0'+k))]
			if len(exp) != len(items) || len(items) == 0 {
				t.Fatalf("%s %d-shot: %d items, %d expected", file, k, len(items), len(exp))
			}
			for i, it := range items {
				prompt, url, stop := promptOf(t, it.Request)
				if prompt != exp[i].Prompt {
					t.Errorf("%s %d-shot item %d prompt:\n%q\nwant\n%q", file, k, i, prompt, exp[i].Prompt)
				}
				if (url == "/v1/completions") != f.completions || (f.completions && !slices.Equal(stop, []string{"[DONE]"})) {
					t.Errorf("%s item %d: url %s stop %v", file, i, url, stop)
				}
				if it.Category != exp[i].Category {
					t.Errorf("%s item %d: category %q, want %q", file, i, it.Category, exp[i].Category)
				}
				if exp[i].Answer != "" {
					var ref struct{ Answer string }
					if err := json.Unmarshal(it.Reference, &ref); err != nil || ref.Answer != exp[i].Answer {
						t.Errorf("%s item %d: reference %s, want answer %q", file, i, it.Reference, exp[i].Answer)
					}
				}
			}
		}
	}
}

// TestMBPPReference checks the stored reference that code execution
// reads, defaults included.
func TestMBPPReference(t *testing.T) {
	t.Parallel()
	items, p := suiteItems(t, []byte(`{"task_id":7,"text":"Add.","code":"def add(a,b):\n    return a+b","test_list":["assert add(1,2)==3"]}`+"\n"+
		`{"task_id":8,"text":"Sub.","code":"def sub(a,b): return a-b","test_list":["assert sub(2,1)==1"],"test_setup_code":"import math","challenge_test_list":["assert sub(0,0)==0"]}`), 0)
	if p.ErrorCount() != 0 || len(items) != 2 {
		t.Fatalf("%d items, errors %v", len(items), p.Errors())
	}
	want := []string{
		`{"task_id":7,"text":"Add.","code":"def add(a,b):\n    return a+b","test_list":["assert add(1,2)==3"],"test_setup_code":"","challenge_test_list":[]}`,
		`{"task_id":8,"text":"Sub.","code":"def sub(a,b): return a-b","test_list":["assert sub(2,1)==1"],"test_setup_code":"import math","challenge_test_list":["assert sub(0,0)==0"]}`,
	}
	for i, it := range items {
		if string(it.Reference) != want[i] || it.CustomID != []string{"mbpp-7", "mbpp-8"}[i] {
			t.Errorf("item %d: %s %s", i, it.CustomID, it.Reference)
		}
	}
}

// TestSuiteRefusals: lines the parser must refuse, with the line and the
// field named; an ambiguous shape is never guessed.
func TestSuiteRefusals(t *testing.T) {
	t.Parallel()
	mmlu := `{"question":"q","subject":"s","choices":["a","b","c","d"],"answer":1}`
	for _, c := range []struct {
		name, input string
		shots       int
		line        int
		field, msg  string
	}{
		{"MMLU without subject reads as GSM8K too", `{"question":"What is 2+2?","choices":["3","4","5","6"],"answer":1}`, 0, 1, "subject", "gsm8k"},
		{"ARC and GSM8K keys at once", `{"question":"q","answer":"4","answerKey":"A"}`, 0, 1, "answer", "arc"},
		{"TruthfulQA and GSM8K keys at once", `{"question":"q","answer":"4","mc1_targets":{"choices":["a","b"],"labels":[1,0]}}`, 0, 1, "answer", "truthfulqa-mc1"},
		{"MMLU answer out of range", `{"question":"q","subject":"s","choices":["a","b","c","d"],"answer":4}`, 0, 1, "answer", "out of range"},
		{"MMLU answer a letter", `{"question":"q","subject":"s","choices":["a","b","c","d"],"answer":"B"}`, 0, 1, "answer", "index"},
		{"MMLU three choices", `{"question":"q","subject":"s","choices":["a","b","c"],"answer":1}`, 0, 1, "choices", "4"},
		{"MMLU empty subject", `{"question":"q","subject":"","choices":["a","b","c","d"],"answer":1}`, 0, 1, "subject", "empty"},
		{"MMLU then a GSM8K line", mmlu + "\n" + `{"question":"q","answer":"#### 4"}`, 0, 2, "", "looks like gsm8k"},
		{"GSM8K then an MMLU line", `{"question":"q","answer":"#### 4"}` + "\n" + mmlu, 0, 2, "", "looks like mmlu"},
		{"ARC answerKey not a label", `{"question":"q","choices":{"text":["a","b"],"label":["A","B"]},"answerKey":"C"}`, 0, 1, "answerKey", "none of"},
		{"ARC choices twice", `{"question":{"stem":"q","choices":[{"text":"a","label":"A"},{"text":"b","label":"B"}]},"choices":{"text":["a"],"label":["A"]},"answerKey":"A"}`, 0, 1, "choices", "not both"},
		{"ARC duplicate labels", `{"question":"q","choices":{"text":["a","b"],"label":["A","A"]},"answerKey":"A"}`, 0, 1, "choices.label", "twice"},
		{"HellaSwag without context", `{"endings":["a","b","c","d"],"label":0}`, 0, 1, "ctx", "missing"},
		{"HellaSwag empty label", `{"ctx":"c","endings":["a","b","c","d"],"label":""}`, 0, 1, "label", "index"},
		{"TruthfulQA two right choices", `{"question":"q","mc1_targets":{"choices":["a","b"],"labels":[1,1]}}`, 0, 1, "mc1_targets.labels[1]", "exactly one"},
		{"TruthfulQA no right choice", `{"question":"q","mc1_targets":{"choices":["a","b"],"labels":[0,0]}}`, 0, 1, "mc1_targets.labels", "no choice"},
		{"MBPP tests not strings", `{"text":"t","code":"c","test_list":[1]}`, 0, 1, "test_list[0]", "string"},
		{"MBPP and HumanEval keys at once", `{"text":"t","code":"c","test_list":["x"],"task_id":"H/1","prompt":"p","test":"t","entry_point":"f"}`, 0, 1, "task_id", "mbpp"},
		{"shots for a HumanEval file", `{"task_id":"H/1","prompt":"def f():","test":"t","entry_point":"f"}`, 1, 0, "", "a prompt and a reference"},
		{"a category too small for the shots", mmlu + "\n" + mmlu, 2, 0, "", `subject "s" has 2`},
		{"WinoGrande without the blank", `{"sentence":"no blank here","option1":"a","option2":"b","answer":"1"}`, 0, 1, "sentence", `"_"`},
		{"WinoGrande test split without answers", `{"sentence":"x _ y","option1":"a","option2":"b","answer":""}`, 0, 1, "answer", "test split"},
		{"WinoGrande answer 3", `{"sentence":"x _ y","option1":"a","option2":"b","answer":3}`, 0, 1, "answer", `"1" or "2"`},
		{"OpenBookQA answerKey not a label", `{"question_stem":"q","choices":{"text":["a","b"],"label":["A","B"]},"answerKey":"E"}`, 0, 1, "answerKey", "none of"},
		{"TriviaQA answer a string", `{"question":"q","question_id":"x","answer":"Paris"}`, 0, 1, "answer", "TriviaQA's object"},
		{"TriviaQA without aliases", `{"question":"q","question_id":"x","answer":{"value":"Paris"}}`, 0, 1, "answer.aliases", "array"},
		{"NQ open with no answers", `{"question":"q","answer":[]}`, 0, 1, "answer", "1 to"},
		{"NQ open then a TriviaQA line", `{"question":"q","answer":["a"]}` + "\n" + `{"question":"q","answer":{"aliases":["a"]}}`, 0, 2, "", "looks like triviaqa"},
		{"CodeXGLUE without a docstring", `{"code_tokens":["def","f"],"docstring_tokens":[]}`, 0, 1, "docstring_tokens", "empty"},
		{"a file too small for the shots", `{"question":"q","answerKey":"A","choices":{"text":["a","b"],"label":["A","B"]}}`, 1, 0, "", "the file has 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			items, p := suiteItems(t, []byte(c.input), c.shots)
			errs := p.Errors()
			if len(errs) == 0 {
				t.Fatalf("accepted: %d items", len(items))
			}
			e := errs[0]
			if e.Line != c.line || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
				t.Fatalf("error %+v; want line %d field %q with %q", e, c.line, c.field, c.msg)
			}
		})
	}
}

// TestKShotExamples checks which items serve as examples: the first k+1
// of the category without the item itself, then the first k; never
// another category's.
func TestKShotExamples(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for i := range 6 {
		subj := []string{"x", "y"}[i%2]
		in.WriteString(`{"question":"Q` + string(rune('0'+i)) + `","subject":"` + subj + `","choices":["a","b","c","d"],"answer":0}` + "\n")
	}
	items, p := suiteItems(t, []byte(in.String()), 1)
	if p.ErrorCount() != 0 || len(items) != 6 {
		t.Fatalf("%d items, %v", len(items), p.Errors())
	}
	// x: Q0 Q2 Q4; y: Q1 Q3 Q5. One shot: Q0←Q2, Q2←Q0, Q4←Q0; Q1←Q3, Q3←Q1, Q5←Q1.
	examples := []string{"Q2", "Q3", "Q0", "Q1", "Q0", "Q1"}
	for i, it := range items {
		prompt, _, _ := promptOf(t, it.Request)
		ex := examples[i]
		if !strings.Contains(prompt, "\n\n"+ex+"\nA. a") || strings.Count(prompt, "Answer:") != 2 || !strings.HasSuffix(prompt, "Q"+string(rune('0'+i))+"\nA. a\nB. b\nC. c\nD. d\nAnswer:") {
			t.Errorf("item %d (%s):\n%s", i, it.Category, prompt)
		}
	}
}
