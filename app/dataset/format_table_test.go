package dataset

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
)

// shapeExamples holds one line of each shape the detector knows, by the
// shape's catalogue key: a shape added without an example fails
// TestFormatsHelpIsTheDetectorsTable.
var shapeExamples = map[string]string{
	"dataset_formats.openai_batch":       `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"x"}]}}`,
	"dataset_formats.mmlu":               `{"question":"q","choices":["a","b","c","d"],"answer":1,"subject":"s"}`,
	"dataset_formats.gsm8k":              `{"question":"q","answer":"x\n#### 4"}`,
	"dataset_formats.arc":                `{"id":"Mercury_7175875","question":{"stem":"s","choices":[{"text":"a","label":"A"},{"text":"b","label":"B"}]},"answerKey":"B"}`,
	"dataset_formats.hellaswag":          `{"ctx":"c","endings":["a","b","c","d"],"label":"1","activity_label":"x"}`,
	"dataset_formats.truthfulqa":         `{"question":"q","mc1_targets":{"choices":["a","b"],"labels":[1,0]}}`,
	"dataset_formats.humaneval":          `{"task_id":"H/0","prompt":"def f():\n","test":"t","entry_point":"f"}`,
	"dataset_formats.mbpp":               `{"text":"t","code":"c","test_list":["assert 1"]}`,
	"dataset_formats.winogrande":         `{"qID":"3QHITW7OYO7Q6B6ISU2UMJB84BLAQE-2","sentence":"Ian ate Dennis's menudo because _ despised it.","option1":"Ian","option2":"Dennis","answer":"2"}`,
	"dataset_formats.openbookqa":         `{"id":"7-980","question_stem":"q","choices":{"text":["a","b"],"label":["A","B"]},"answerKey":"A"}`,
	"dataset_formats.openbookqa_release": `{"id":"8-343","question":{"stem":"s","choices":[{"text":"a","label":"A"},{"text":"b","label":"B"}]},"answerKey":"B"}`,
	"dataset_formats.triviaqa":           `{"question":"q","question_id":"tc_1","answer":{"aliases":["A"],"normalized_aliases":["a"],"value":"A"}}`,
	"dataset_formats.triviaqa_release":   `{"Answer":{"Aliases":["Sinclair Lewis","Harry Sinclair Lewis"],"NormalizedAliases":["sinclair lewis","harry sinclair lewis"],"Value":"Sinclair Lewis","Type":"WikipediaEntity"},"EntityPages":[],"Question":"Which American-born Sinclair won the Nobel Prize for Literature in 1930?","QuestionId":"tc_1","QuestionSource":"http://www.triviacountry.com/"}`,
	"dataset_formats.nq_open":            `{"question":"who sings does he love me with reba","answer":["Linda Davis"]}`,
	"dataset_formats.codexglue":          `{"code_tokens":["def","f"],"docstring_tokens":["Does","f"],"language":"python"}`,
	"dataset_formats.simple":             `{"prompt":"p"}`,
}

// The "cannot tell the format" message is the detector's own table: one
// line per shape, naming its format and keys, in both languages; and each
// shape's example line is detected as that shape's format.
func TestFormatsHelpIsTheDetectorsTable(t *testing.T) {
	t.Parallel()
	p := NewParser(strings.NewReader(`{"foo":1}`), Limits{})
	for _, ok := p.Next(); ok; _, ok = p.Next() {
	}
	errs := p.Errors()
	if len(errs) != 1 || errs[0].Line != 1 || errs[0].Key != "dataset_err.cannot_tell_format" {
		t.Fatalf("errors %+v", errs)
	}
	for _, lang := range []string{"en", "de"} {
		text := i18n.Message{Key: errs[0].Key, Args: errs[0].Args}.In(i18n.Default().Lang(lang))
		lines := strings.Split(text, "\n")
		if len(lines) != len(formatShapes)+1 {
			t.Fatalf("%s: %d lines for %d shapes:\n%s", lang, len(lines), len(formatShapes), text)
		}
		for i, s := range formatShapes {
			if l := lines[i+1]; !strings.HasPrefix(l, string(s.format)+": "+s.shapeKeys()+" (") {
				t.Errorf("%s line %d %q: want %s and %s", lang, i+1, l, s.format, s.shapeKeys())
			}
		}
	}
	for _, s := range formatShapes {
		ex, ok := shapeExamples[s.line]
		if !ok {
			t.Errorf("shape %s has no example line", s.line)
			continue
		}
		var f fields
		eachField([]byte(ex), func(k, v []byte) bool { f.set(k, v); return true })
		if got, le := f.detect(); le != nil || got != s.format || !s.matches(&f) {
			t.Errorf("%s: detected %q (%v), want %s", s.line, got, le, s.format)
		}
	}
	if len(shapeExamples) != len(formatShapes) {
		t.Errorf("%d examples for %d shapes", len(shapeExamples), len(formatShapes))
	}
}

// Each suite's release file is read beside its Hugging Face shape: the
// format, the item's id, the prompt and the reference.
func TestReleaseFilesAreRecognised(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, line string
		format     Format
		id, prompt string
		ref        string
	}{
		{"TriviaQA release", shapeExamples["dataset_formats.triviaqa_release"], FormatTriviaQA, "tc_1",
			"Question: Which American-born Sinclair won the Nobel Prize for Literature in 1930??\nAnswer:",
			`{"answer":["sinclair lewis","harry sinclair lewis"],"aliases":["Sinclair Lewis","Harry Sinclair Lewis"],"value":"Sinclair Lewis"}`},
		{"TriviaQA release without QuestionId", `{"Question":"Q","Answer":{"Aliases":["A"]}}`, FormatTriviaQA, "triviaqa-1", "Question: Q?\nAnswer:",
			`{"answer":["A"],"aliases":["A"],"value":"A"}`},
		{"NQ open release", `{"question":"when was the last time anyone was on the moon","answer":["14 December 1972 UTC","December 1972"]}`, FormatNQOpen, "nq-open-1",
			"Answer these questions:\n\nQ: when was the last time anyone was on the moon?\nA:", `{"answer":["14 December 1972 UTC","December 1972"]}`},
		{"OpenBookQA release (Main)", shapeExamples["dataset_formats.openbookqa_release"], FormatOpenBookQA, "8-343", "s\nA. a\nB. b\nAnswer:",
			`{"answer":"B","choices":["a","b"],"label":1}`},
		{"OpenBookQA release (Additional)", `{"id":"x","question":{"stem":"s","choices":[{"text":"a","label":"A"},{"text":"b","label":"B"}]},"fact1":"f","humanScore":"1.00","answerKey":" A"}`,
			FormatOpenBookQA, "x", "s\nA. a\nB. b\nAnswer:", `{"answer":"A","choices":["a","b"],"label":0}`},
		{"ARC release stays ARC", shapeExamples["dataset_formats.arc"], FormatARC, "Mercury_7175875", "s\nA. a\nB. b\nAnswer:", `{"answer":"B","choices":["a","b"],"label":1}`},
		{"WinoGrande release", shapeExamples["dataset_formats.winogrande"], FormatWinoGrande, "3QHITW7OYO7Q6B6ISU2UMJB84BLAQE-2",
			"Ian ate Dennis's menudo because _ despised it.\nA. Ian ate Dennis's menudo because Ian despised it.\nB. Ian ate Dennis's menudo because Dennis despised it.\nAnswer:",
			`{"answer":"B","choices":["Ian ate Dennis's menudo because Ian despised it.","Ian ate Dennis's menudo because Dennis despised it."],"label":1}`},
	} {
		p := NewParser(strings.NewReader(c.line+"\n"), Limits{})
		it, ok := p.Next()
		if !ok || p.Format() != c.format {
			t.Errorf("%s: format %q, errors %+v", c.name, p.Format(), p.Errors())
			continue
		}
		var req struct {
			Body struct {
				Prompt   string                     `json:"prompt"`
				Messages []struct{ Content string } `json:"messages"`
			} `json:"body"`
		}
		if err := json.Unmarshal(it.Request, &req); err != nil {
			t.Fatal(err)
		}
		prompt := req.Body.Prompt
		if len(req.Body.Messages) == 1 {
			prompt = req.Body.Messages[0].Content
		}
		if it.CustomID != c.id || prompt != c.prompt || string(it.Reference) != c.ref {
			t.Errorf("%s: id %q prompt %q ref %s\nwant %q %q %s", c.name, it.CustomID, prompt, it.Reference, c.id, c.prompt, c.ref)
		}
	}
}

// A release file's problems name their line and field.
func TestReleaseFileErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, file, field, msg string
		line                   int
	}{
		{"TriviaQA release then a line without Answer", shapeExamples["dataset_formats.triviaqa_release"] + "\n" + `{"Question":"q","QuestionId":"x"}`, "Answer", `"Answer" is missing`, 2},
		{"TriviaQA release then Answer a list", shapeExamples["dataset_formats.triviaqa_release"] + "\n" + `{"Question":"q","Answer":["a"]}`, "Answer", "TriviaQA's", 2},
		{"TriviaQA release without Aliases", shapeExamples["dataset_formats.triviaqa_release"] + "\n" + `{"Question":"q","Answer":{"Value":"v"}}`, "Answer.Aliases", "array", 2},
		{"TriviaQA release Answer a string", `{"Question":"q","QuestionId":"x","Answer":"v"}`, "Answer", "TriviaQA's", 1},
		{"TriviaQA release as one document", `{"Data":[{"Question":"q"}],"Domain":"Web","Version":1.0}`, "", "jq -c '.Data[]'", 1},
		{"TriviaQA release QuestionId empty", `{"Question":"q","QuestionId":"","Answer":{"Aliases":["a"]}}`, "QuestionId", "empty", 1},
		{"WinoGrande release test split", `{"qID":"x-1","sentence":"a _ b","option1":"x","option2":"y"}`, "answer", "test split", 1},
		{"OpenBookQA release without stem", `{"id":"7-1","question":{"choices":[]},"answerKey":"A"}`, "question.stem", "stem", 1},
		{"OpenBookQA release then an ARC line", shapeExamples["dataset_formats.openbookqa_release"] + "\n" + shapeExamples["dataset_formats.arc"], "", "openbookqa", 2},
	} {
		p := NewParser(strings.NewReader(c.file+"\n"), Limits{})
		for _, ok := p.Next(); ok; _, ok = p.Next() {
		}
		errs := p.Errors()
		if len(errs) != 1 || errs[0].Line != c.line || errs[0].Field != c.field || !strings.Contains(errs[0].Message, c.msg) {
			t.Errorf("%s: %+v; want line %d field %q with %q", c.name, errs, c.line, c.field, c.msg)
		}
	}
}
