package dataset

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/i18n"
)

// formatShape is one shape a line can have: the format it is read as, the
// keys that identify it and, worded in the catalogue, anything else that
// does (a value's kind). The detector tries the shapes of formatShapes and
// the "cannot tell the format" message lists them, one line each, so what
// the message promises is what the detector checks (docs/quality.md#how-a-format-is-recognised).
type formatShape struct {
	format Format
	keys   []string // every one present, or with anyOf at least one
	anyOf  bool
	line   string               // catalogue key of the shape's line; {{.Keys}} is keys
	is     func(f *fields) bool // nil: every key present
}

// matches reports whether the line has the shape.
func (s formatShape) matches(f *fields) bool {
	if s.is != nil {
		return s.is(f)
	}
	for _, k := range s.keys {
		if f.get(k) == nil {
			return false
		}
	}
	return true
}

// formatShapes are the shapes in the order they are tried and listed: the
// more specific first (a HumanEval line also has a "prompt"); a suite's
// own release file beside its Hugging Face shape.
var formatShapes = []formatShape{
	{format: FormatOpenAIBatch, keys: []string{"custom_id", "body"}, line: "dataset_formats.openai_batch",
		is: func(f *fields) bool { return f.customID != nil && f.body != nil }},
	{format: FormatMMLU, keys: []string{"question", "choices", "answer", "subject"}, line: "dataset_formats.mmlu"},
	{format: FormatGSM8K, keys: []string{"question", "answer"}, line: "dataset_formats.gsm8k",
		// NQ open ("answer" a list) and TriviaQA ("answer" an object) have
		// the same keys and are told apart by the value.
		is: func(f *fields) bool {
			return f.question != nil && f.answer != nil && !isArray(f.answer) && !isObject(f.answer)
		}},
	{format: FormatARC, keys: []string{"question", "answerKey"}, line: "dataset_formats.arc",
		is: func(f *fields) bool { return f.question != nil && f.answerKey != nil && !obqaRelease(f) }},
	{format: FormatHellaSwag, keys: []string{"endings", "label"}, line: "dataset_formats.hellaswag"},
	{format: FormatTruthfulQA, keys: []string{"question", "mc1_targets"}, line: "dataset_formats.truthfulqa"},
	{format: FormatHumanEval, keys: []string{"task_id", "prompt", "test", "entry_point"}, line: "dataset_formats.humaneval",
		is: func(f *fields) bool {
			return f.taskID != nil && f.prompt != nil && f.test != nil && f.entryPoint != nil
		}},
	{format: FormatMBPP, keys: []string{"text", "code", "test_list"}, line: "dataset_formats.mbpp"},
	{format: FormatWinoGrande, keys: []string{"sentence", "option1", "option2"}, line: "dataset_formats.winogrande"},
	{format: FormatOpenBookQA, keys: []string{"question_stem", "choices", "answerKey"}, line: "dataset_formats.openbookqa"},
	{format: FormatOpenBookQA, keys: []string{"question", "answerKey"}, line: "dataset_formats.openbookqa_release", is: obqaRelease},
	{format: FormatTriviaQA, keys: []string{"question", "answer"}, line: "dataset_formats.triviaqa",
		is: func(f *fields) bool { return f.question != nil && isObject(f.answer) }},
	{format: FormatTriviaQA, keys: []string{"Question", "Answer"}, line: "dataset_formats.triviaqa_release",
		is: func(f *fields) bool { return f.questionCap != nil && f.answerCap != nil }},
	{format: FormatNQOpen, keys: []string{"question", "answer"}, line: "dataset_formats.nq_open",
		is: func(f *fields) bool { return f.question != nil && isArray(f.answer) }},
	{format: FormatCodeXGLUE, keys: []string{"code_tokens", "docstring_tokens"}, line: "dataset_formats.codexglue"},
	{format: FormatSimple, keys: []string{"prompt", "messages"}, anyOf: true, line: "dataset_formats.simple",
		is: func(f *fields) bool { return f.prompt != nil || f.messages != nil }},
}

// shapeOf is fm's first shape (its Hugging Face one), whose keys the
// messages about an incomplete line name.
func shapeOf(fm Format) (formatShape, bool) {
	for _, s := range formatShapes {
		if s.format == fm {
			return s, true
		}
	}
	return formatShape{}, false
}

// closestShape is the shape of fm whose keys the line has most of (the
// first on a tie): the one an incomplete line's message names keys from.
func closestShape(f *fields, fm Format) formatShape {
	best, bestN := formatShape{keys: []string{"prompt"}}, -1
	for _, s := range formatShapes {
		if s.format != fm {
			continue
		}
		n := 0
		for _, k := range s.keys {
			if f.get(k) != nil {
				n++
			}
		}
		if n > bestN {
			best, bestN = s, n
		}
	}
	return best
}

// obqaIDPattern is OpenBookQA's question ids ("7-980", "8-343"); ARC's
// (Mercury_7175875, NYSEDREGENTS_2015_4_29, …) never look so.
var obqaIDPattern = regexp.MustCompile(`^[0-9]+-[0-9]+$`)

// obqaRelease reports a line of OpenBookQA's release files (AI2's shape,
// which ARC's release shares: question{stem, choices}, answerKey), told
// from ARC by its id or by the "fact1" of its Additional files.
func obqaRelease(f *fields) bool {
	if !isObject(f.question) || f.answerKey == nil {
		return false
	}
	id, _ := decodeString(f.id)
	return f.fact1 != nil || obqaIDPattern.MatchString(id)
}

// shapeKeys writes a shape's keys: `"a", "b" and "c"`, or with anyOf
// `"a" or "b"`.
func (s formatShape) shapeKeys() string {
	if !s.anyOf {
		return quoteKeys(s.keys)
	}
	q := make([]string, len(s.keys))
	for i, k := range s.keys {
		q[i] = strconv.Quote(k)
	}
	return strings.Join(q, " or ")
}

// FormatsHelp lists every shape the detector knows, one line each: what
// "cannot tell the format" says.
func FormatsHelp() i18n.Lines {
	out := make(i18n.Lines, len(formatShapes))
	for i, s := range formatShapes {
		out[i] = i18n.M(s.line, "Format", string(s.format), "Keys", s.shapeKeys())
	}
	return out
}

// unknownShape says why a first line fits no format: TriviaQA's release
// as one JSON document (its items under "Data"), else every shape known.
func unknownShape(f *fields) i18n.Message {
	if isArray(f.data) {
		return i18n.M("dataset_err.release_document")
	}
	return i18n.M("dataset_err.cannot_tell_format", "Formats", FormatsHelp())
}
