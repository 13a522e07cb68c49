package dataset

import (
	"encoding/json"
	"fmt"
	"github.com/ruckus/ruckus/app/i18n"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The standard suites (MMLU, ARC, HellaSwag, TruthfulQA MC1, MBPP) are
// turned into prompts with each suite's reference template from
// EleutherAI's lm-evaluation-harness, so a score here means what it means
// there. Ruckus generates text rather than comparing the likelihoods of
// the choices, so the multiple-choice suites are asked with MMLU's
// generative lettered template (lm-eval's mmlu default doc_to_text:
// "{question}\nA. …\nB. …\nAnswer:") and scored by the letter the model
// answers with (the "choice" scorer):
//
//   - MMLU: lm-eval's mmlu default, description "The following are
//     multiple choice questions (with answers) about {subject with _ as
//     spaces}.\n\n" then "{question.strip()}\nA. …\nD. …\nAnswer:".
//   - ARC: the same lettered template on question.stem with the choices
//     in file order, lettered A, B, … by position (ARC's own labels may be
//     digits); no description. lm-eval's arc template ("Question: {q}\n
//     Answer:") is its loglikelihood form and names no choices.
//   - HellaSwag: lm-eval's hellaswag preprocessing exactly (the query
//     "{activity_label}: {ctx_a} {ctx_b.capitalize()}" and each ending
//     through preprocess), asked with the lettered template.
//   - TruthfulQA MC1: mc1_targets' choices in file order with the lettered
//     template (lm-eval's truthfulqa_mc1 compares likelihoods after a fixed
//     6-question preamble instead).
//   - MBPP: lm-eval's mbpp template, "You are an expert Python programmer,
//     and here is your task: {text} Your code should pass these
//     tests:\n\n{tests, one per line}\n[BEGIN]\n", sent to
//     /v1/completions with "[DONE]" as the stop sequence.
//
// k-shot prompts follow lm-eval's layout: description, then each example
// as its question followed by its answer (" B" for the lettered suites,
// target delimiter " "; "{code}\n[DONE]" for MBPP, delimiter "") and
// "\n\n", then the item's question.

// maxCategoryRunes bounds a category name.
const maxCategoryRunes = 200

// maxChoices is how many choices a lettered question may have (A–Z).
const maxChoices = 26

// setSuite records a suite's top-level key.
func (f *fields) setSuite(key string, v []byte) {
	switch key {
	case "subject":
		f.subject = v
	case "answerKey":
		f.answerKey = v
	case "category":
		f.category = v
	case "ctx":
		f.ctx = v
	case "ctx_a":
		f.ctxA = v
	case "ctx_b":
		f.ctxB = v
	case "endings":
		f.endings = v
	case "activity_label":
		f.activityLabel = v
	case "mc1_targets":
		f.mc1Targets = v
	case "text":
		f.text = v
	case "code":
		f.code = v
	case "test_list":
		f.testList = v
	case "test_setup_code":
		f.testSetupCode = v
	case "challenge_test_list":
		f.challengeTL = v
	case "sentence":
		f.sentence = v
	case "option1":
		f.option1 = v
	case "option2":
		f.option2 = v
	case "question_stem":
		f.questionStem = v
	case "question_id":
		f.questionID = v
	case "code_tokens":
		f.codeTokens = v
	case "docstring_tokens":
		f.docstringTokens = v
	case "language":
		f.language = v
	case "Question":
		f.questionCap = v
	case "QuestionId":
		f.questionIDCap = v
	case "Answer":
		f.answerCap = v
	case "qID":
		f.qID = v
	case "fact1":
		f.fact1 = v
	case "Data":
		f.data = v
	}
}

// isSuite reports whether fm is one of the standard suites.
func isSuite(fm Format) bool {
	switch fm {
	case FormatMMLU, FormatARC, FormatHellaSwag, FormatTruthfulQA, FormatMBPP,
		FormatWinoGrande, FormatOpenBookQA, FormatTriviaQA, FormatNQOpen, FormatCodeXGLUE:
		return true
	}
	return false
}

// suiteKeys are the keys that identify a format's first shape.
func suiteKeys(fm Format) []string {
	if s, ok := shapeOf(fm); ok {
		return s.keys
	}
	return []string{"prompt"}
}

// quoteKeys writes keys as `"a", "b" and "c"`.
func quoteKeys(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// get returns the raw value of one of the keys this parser reads.
func (f *fields) get(key string) []byte {
	switch key {
	case "question":
		return f.question
	case "choices":
		return f.choices
	case "answer":
		return f.answer
	case "subject":
		return f.subject
	case "answerKey":
		return f.answerKey
	case "endings":
		return f.endings
	case "label":
		return f.label
	case "mc1_targets":
		return f.mc1Targets
	case "text":
		return f.text
	case "code":
		return f.code
	case "test_list":
		return f.testList
	case "custom_id":
		return f.customID
	case "body":
		return f.body
	case "task_id":
		return f.taskID
	case "prompt":
		return f.prompt
	case "test":
		return f.test
	case "entry_point":
		return f.entryPoint
	case "sentence":
		return f.sentence
	case "option1":
		return f.option1
	case "option2":
		return f.option2
	case "question_stem":
		return f.questionStem
	case "code_tokens":
		return f.codeTokens
	case "docstring_tokens":
		return f.docstringTokens
	case "Question":
		return f.questionCap
	case "Answer":
		return f.answerCap
	}
	return nil
}

// hasSuiteKey reports whether the line has a key only suite fm uses.
func (f *fields) hasSuiteKey(fm Format) bool {
	switch fm {
	case FormatMMLU:
		return f.subject != nil
	case FormatARC:
		return f.answerKey != nil
	case FormatHellaSwag:
		return f.endings != nil || f.ctx != nil || f.ctxA != nil || f.ctxB != nil || f.activityLabel != nil
	case FormatTruthfulQA:
		return f.mc1Targets != nil
	case FormatMBPP:
		return f.testList != nil || f.code != nil || f.text != nil
	case FormatWinoGrande:
		return f.sentence != nil || f.option1 != nil || f.option2 != nil || f.qID != nil
	case FormatOpenBookQA:
		return f.questionStem != nil || f.fact1 != nil
	case FormatTriviaQA:
		return f.questionID != nil || isObject(f.answer) || f.questionCap != nil || f.questionIDCap != nil || f.answerCap != nil
	case FormatNQOpen:
		return isArray(f.answer)
	case FormatCodeXGLUE:
		return f.codeTokens != nil || f.docstringTokens != nil
	}
	return false
}

// missingSuite names the first identifying key of suite fm the line lacks.
func (f *fields) missingSuite(fm Format) *LineError {
	keys := closestShape(f, fm).keys
	for _, k := range keys {
		if f.get(k) == nil {
			return lineErr(k, "dataset_err.missing", "A", strconv.Quote(k))
		}
	}
	switch fm {
	case FormatTriviaQA:
		if keys[0] == "Question" {
			return lineErr("Answer", "dataset_err.answer_object_value_aliases", "A", kindOf(f.answerCap))
		}
		return lineErr("answer", "dataset_err.answer_object_value_aliases", "A", kindOf(f.answer))
	case FormatNQOpen:
		return lineErr("answer", "dataset_err.answer_array_acceptable_answers", "A", kindOf(f.answer))
	}
	return lineErr("", "dataset_err.lacks_keys_of", "A", string(fm))
}

// detect finds the line's format. A line that fits two formats equally
// is refused (the error names them and the field that decides), never
// guessed: the more specific of two shapes wins only where one's keys
// include the other's (MMLU over GSM8K, any format over simple).
func (f *fields) detect() (Format, *LineError) {
	var m []Format
	for _, s := range formatShapes {
		if !slices.Contains(m, s.format) && s.matches(f) {
			m = append(m, s.format)
		}
	}
	if len(m) > 1 {
		m = slices.DeleteFunc(m, func(fm Format) bool { return fm == FormatSimple })
	}
	if slices.Contains(m, FormatMMLU) {
		m = slices.DeleteFunc(m, func(fm Format) bool { return fm == FormatGSM8K })
	}
	switch {
	case len(m) == 0:
		return "", nil
	case len(m) == 1 && m[0] == FormatGSM8K && !absent(f.choices):
		// An MMLU line without its subject reads as GSM8K with choices;
		// its integer answer would become a "numeric" reference.
		return "", lineErr("subject", "dataset_err.fits_mmlu_and_gsm8k")
	case len(m) == 1 && m[0] == FormatGSM8K && f.questionID != nil:
		// TriviaQA's question_id with an answer that is not its object.
		return "", lineErr("answer", "dataset_err.line_has_triviaqa_question")
	case len(m) == 1:
		return m[0], nil
	}
	if !slices.ContainsFunc(m, isSuite) {
		return m[0], nil // the earlier formats keep their order of precedence
	}
	a, b := m[0], m[1]
	var decide []string
	for _, k := range suiteKeys(a) {
		if !slices.Contains(suiteKeys(b), k) {
			decide = append(decide, k)
			break
		}
	}
	for _, k := range suiteKeys(b) {
		if !slices.Contains(suiteKeys(a), k) {
			decide = append(decide, k)
			break
		}
	}
	field := ""
	if len(decide) > 0 {
		field = decide[0]
	}
	return "", lineErr(field, "dataset_err.fits_two_formats", "A", a, "B", quoteKeys(suiteKeys(a)), "C", b, "D", quoteKeys(suiteKeys(b)), "E", quoteKeys(decide))
}

// Shot is one suite item's prompt in pieces, so k-shot prompts can put
// solved examples between them. It is kept with the item
// (dataset_items.shot, never readable by agents: examples carry answers)
// so a benchmark can build its own k-shot prompts (FewShotRequest).
type Shot struct {
	Group      string   `json:"group,omitempty"`      // the items examples come from share it: MMLU's subject, else "" (the whole file)
	Head       string   `json:"head,omitempty"`       // before the examples: MMLU's description; the same for a whole group
	Query      string   `json:"query"`                // the item's question as the template writes it, up to where the answer goes
	Answer     string   `json:"answer"`               // what follows Query in a solved example (lm-eval's target delimiter and target)
	Sep        string   `json:"sep,omitempty"`        // after each example (lm-eval's fewshot_delimiter); "" means "\n\n"
	Completion bool     `json:"completion,omitempty"` // the request goes to /v1/completions (MBPP, TriviaQA, NQ open)
	Stop       []string `json:"stop,omitempty"`       // the completion's stop sequences
	Question   string   `json:"question,omitempty"`   // the bare question, for a fixed exemplar set's template (GSM8K, plain items)
}

type shot = Shot

// size is roughly what a held shot costs in memory.
func (s *shot) size() int { return len(s.Head) + len(s.Query) + len(s.Answer) + 64 }

// prompt writes the full prompt with the given solved examples.
func (s *shot) prompt(examples []*shot) string {
	var b strings.Builder
	b.WriteString(s.Head)
	sep := s.Sep
	if sep == "" {
		sep = "\n\n"
	}
	for _, e := range examples {
		b.WriteString(e.Query)
		b.WriteString(e.Answer)
		b.WriteString(sep)
	}
	b.WriteString(s.Query)
	return b.String()
}

// FewShotRequest builds an item's request with the given solved examples
// before its question, exactly as an upload's k-shot prompts are built:
// the description, each example's query and answer followed by the
// fewshot delimiter, then the item's query (lm-eval's fewshot_context).
func FewShotRequest(item Shot, examples []Shot) []byte {
	p := &Parser{}
	p.enc = json.NewEncoder(&p.encBuf)
	p.enc.SetEscapeHTML(false)
	ex := make([]*Shot, len(examples))
	for i := range examples {
		ex[i] = &examples[i]
	}
	return p.request(&item, ex)
}

// request builds the item's request from its prompt.
func (p *Parser) request(s *shot, examples []*shot) []byte {
	prompt := s.prompt(examples)
	if s.Completion {
		req := make([]byte, 0, len(prompt)+100)
		req = append(req, `{"method":"POST","url":"`+urlCompletion+`","body":{"prompt":`...)
		req = p.appendString(req, prompt)
		req = append(req, `,"stop":[`...)
		for i, st := range s.Stop {
			if i > 0 {
				req = append(req, ',')
			}
			req = p.appendString(req, st)
		}
		return append(req, "]}}"...)
	}
	req := chatPrompt(p.appendString(nil, prompt))
	if len(s.Stop) == 0 {
		return req
	}
	// A chat request with stops (GSM8K's and a plain item's k-shot
	// prompt): the body gains "stop" after "messages".
	req = append(req[:len(req)-2], `,"stop":`...)
	req = p.appendStrings(req, s.Stop)
	return append(req, "}}"...)
}

// suite normalises a line of one of the standard suites.
func (p *Parser) suite(fm Format, f *fields, itemNo int) (norm, *LineError) {
	var (
		r  norm
		le *LineError
	)
	switch fm {
	case FormatMMLU:
		r, le = p.mmlu(f, itemNo)
	case FormatARC:
		r, le = p.arc(f, itemNo)
	case FormatHellaSwag:
		r, le = p.hellaswag(f, itemNo)
	case FormatTruthfulQA:
		r, le = p.truthfulQA(f, itemNo)
	case FormatMBPP:
		r, le = p.mbpp(f, itemNo)
	case FormatWinoGrande:
		r, le = p.winogrande(f, itemNo)
	case FormatOpenBookQA:
		r, le = p.openBookQA(f, itemNo)
	case FormatTriviaQA:
		r, le = p.triviaQA(f, itemNo)
	case FormatNQOpen:
		r, le = p.nqOpen(f, itemNo)
	case FormatCodeXGLUE:
		r, le = p.codeToText(f, itemNo)
	default:
		return r, lineErr("", "dataset_err.unknown_format", "A", string(fm))
	}
	if le != nil {
		return r, le
	}
	if !absent(f.category) && r.category == "" {
		c, le := categoryOf(f.category, "category")
		if le != nil {
			return r, le
		}
		r.category = c
	}
	r.req = p.request(r.shot, nil)
	return r, nil
}

// categoryOf validates a category name.
func categoryOf(raw []byte, field string) (string, *LineError) {
	s, ok := decodeString(raw)
	switch {
	case !ok:
		return "", lineErr(field, "dataset_err.field_string", "A", field, "B", kindOf(raw))
	case !IsText(s):
		return "", lineErr(field, "dataset_err.utf_8_text", "A", field)
	case utf8.RuneCountInString(s) > maxCategoryRunes:
		return "", lineErr(field, "dataset_err.may_at_most_characters", "A", field, "B", maxCategoryRunes)
	}
	return s, nil
}

// stringList decodes an array of strings, between min and max of them.
func stringList(raw []byte, field string, lo, hi int) ([]string, *LineError) {
	if !isArray(raw) {
		return nil, lineErr(field, "dataset_err.array_strings", "A", field, "B", kindOf(raw))
	}
	var out []string
	var le *LineError
	eachElem(raw, func(v []byte) bool {
		s, ok := decodeString(v)
		if !ok {
			le = lineErr(fmt.Sprintf("%s[%d]", field, len(out)), "dataset_err.element_string", "A", kindOf(v))
			return false
		}
		out = append(out, s)
		return len(out) <= hi
	})
	switch {
	case le != nil:
		return nil, le
	case len(out) < lo || len(out) > hi:
		want := fmt.Sprintf("%d to %d", lo, hi)
		if lo == hi {
			want = strconv.Itoa(lo)
		}
		var n any = len(out)
		if len(out) > hi {
			n = i18n.M("dataset_err.more")
		}
		return nil, lineErr(field, "dataset_err.have_entries", "A", field, "B", want, "C", n)
	}
	return out, nil
}

// textOf decodes a required non-empty string.
func textOf(raw []byte, field string) (string, *LineError) {
	if le := checkText(raw, field); le != nil {
		return "", le
	}
	s, _ := decodeString(raw)
	return s, nil
}

// lettered writes the choices as "\nA. …\nB. …" and closes with
// "\nAnswer:", MMLU's template after the question.
func lettered(question string, choices []string) string {
	var b strings.Builder
	b.WriteString(question)
	for i, c := range choices {
		b.WriteByte('\n')
		b.WriteByte(byte('A' + i))
		b.WriteString(". ")
		b.WriteString(c)
	}
	b.WriteString("\nAnswer:")
	return b.String()
}

// letteredItem makes r a lettered multiple-choice item: the question with
// its choices lettered (MMLU's template), " X" as a solved example's
// answer, and the choice reference.
func (p *Parser) letteredItem(r *norm, query string, choices []string, idx int) {
	r.shot = &Shot{Query: lettered(query, choices), Answer: " " + string(rune('A'+idx))}
	r.ref = p.choiceRef(choices, idx)
	r.answer, r.choices = true, true
}

// choiceRef builds a multiple-choice reference: the letter (what the
// choice scorer compares), the choices as given and the answer's index.
func (p *Parser) choiceRef(choices []string, idx int) []byte {
	ref := append(make([]byte, 0, 64), `{"answer":"`...)
	ref = append(ref, byte('A'+idx))
	ref = append(ref, `","choices":[`...)
	for i, c := range choices {
		if i > 0 {
			ref = append(ref, ',')
		}
		ref = p.appendString(ref, c)
	}
	ref = append(ref, `],"label":`...)
	ref = strconv.AppendInt(ref, int64(idx), 10)
	return append(ref, '}')
}

// mmlu normalises an MMLU line (cais/mmlu): question, 4 choices, answer
// the index of the right one, subject.
func (p *Parser) mmlu(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	q, le := textOf(f.question, "question")
	if le != nil {
		return r, le
	}
	choices, le := stringList(f.choices, "choices", 4, 4)
	if le != nil {
		return r, le
	}
	ans, ok := integer(f.answer)
	if !ok {
		return r, lineErr("answer", "dataset_err.answer_index_0_to", "A", kindOf(f.answer))
	}
	if ans < 0 || ans > 3 {
		return r, lineErr("answer", "dataset_err.answer_out_range_for", "A", ans)
	}
	subject, le := categoryOf(f.subject, "subject")
	if le != nil {
		return r, le
	}
	if subject == "" {
		return r, lineErr("subject", "dataset_err.subject_empty")
	}
	r.id = "mmlu-" + strconv.Itoa(itemNo)
	r.category = subject
	r.shot = &Shot{
		Group:  subject,
		Head:   "The following are multiple choice questions (with answers) about " + strings.ReplaceAll(subject, "_", " ") + ".\n\n",
		Query:  lettered(pyStrip(q), choices),
		Answer: " " + string(rune('A'+ans)),
	}
	r.ref = p.choiceRef(choices, int(ans))
	r.answer, r.choices = true, true
	return r, nil
}

// arc normalises an ARC line in AI2's shape (question{stem, choices[{text,
// label}]}, answerKey) or Hugging Face's (question, choices{text[],
// label[]}, answerKey).
func (p *Parser) arc(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	var (
		stem           string
		texts, labels  []string
		le             *LineError
		textF, labelsF = "choices.text", "choices.label"
	)
	switch {
	case isObject(f.question):
		if !absent(f.choices) {
			return r, lineErr("choices", "dataset_err.give_choices_either_in")
		}
		if stem, texts, labels, le = ai2Question(f.question); le != nil {
			return r, le
		}
		textF, labelsF = "question.choices", "question.choices"
	case isString(f.question):
		if stem, le = textOf(f.question, "question"); le != nil {
			return r, le
		}
		if texts, labels, le = hfChoices(f.choices); le != nil {
			return r, le
		}
	default:
		return r, lineErr("question", "dataset_err.question_string_stem_choices", "A", kindOf(f.question))
	}
	if len(texts) < 2 || len(texts) > maxChoices {
		return r, lineErr(textF, "dataset_err.arc_question_needs_2", "A", maxChoices)
	}
	idx, le := arcAnswer(f.answerKey, labels, labelsF)
	if le != nil {
		return r, le
	}
	if r.id, r.idField, le = itemID(f.id, "arc-", itemNo); le != nil {
		return r, le
	}
	p.letteredItem(&r, pyStrip(stem), texts, idx)
	return r, nil
}

// ai2Question reads AI2's question object {stem, choices[{text, label}]}.
func ai2Question(raw []byte) (stem string, texts, labels []string, le *LineError) {
	var rawStem, rawChoices []byte
	eachField(raw, func(k, v []byte) bool {
		switch {
		case keyIs(k, "stem"):
			rawStem = v
		case keyIs(k, "choices"):
			rawChoices = v
		}
		return true
	})
	if rawStem == nil {
		return "", nil, nil, lineErr("question.stem", "dataset_err.question_stem_missing")
	}
	if stem, le = textOf(rawStem, "question.stem"); le != nil {
		return "", nil, nil, le
	}
	if texts, labels, le = ai2Choices(rawChoices); le != nil {
		return "", nil, nil, le
	}
	return stem, texts, labels, nil
}

// ai2Choices reads question.choices, an array of {label, text} objects;
// it stops reading past maxChoices, which the caller refuses.
func ai2Choices(raw []byte) (texts, labels []string, le *LineError) {
	if !isArray(raw) {
		return nil, nil, lineErr("question.choices", "dataset_err.question_choices_array_label", "A", kindOf(raw))
	}
	eachElem(raw, func(v []byte) bool {
		at := fmt.Sprintf("question.choices[%d]", len(texts))
		if !isObject(v) {
			le = lineErr(at, "dataset_err.choice_label_text_object", "A", kindOf(v))
			return false
		}
		var t, l []byte
		eachField(v, func(k, v []byte) bool {
			switch {
			case keyIs(k, "text"):
				t = v
			case keyIs(k, "label"):
				l = v
			}
			return true
		})
		ts, ok1 := decodeString(t)
		ls, ok2 := decodeString(l)
		switch {
		case !ok1:
			le = lineErr(at+".text", "dataset_err.text_string", "A", kindOf(t))
		case !ok2:
			le = lineErr(at+".label", "dataset_err.label_string", "A", kindOf(l))
		}
		texts, labels = append(texts, ts), append(labels, ls)
		return le == nil && len(texts) <= maxChoices
	})
	if le != nil {
		return nil, nil, le
	}
	return texts, labels, nil
}

// arcAnswer is the index of the choice answerKey names among labels, which
// must all differ (labelsF is where they were given).
func arcAnswer(answerKey []byte, labels []string, labelsF string) (int, *LineError) {
	key, ok := decodeString(answerKey)
	if !ok {
		return -1, lineErr("answerKey", "dataset_err.answerkey_string_choice_label", "A", kindOf(answerKey))
	}
	idx := -1
	for i, l := range labels {
		if slices.Index(labels, l) != i {
			return -1, lineErr(labelsF, "dataset_err.label_given_twice", "A", strconv.Quote(l))
		}
		if l == key {
			idx = i
		}
	}
	if idx < 0 {
		return -1, lineErr("answerKey", "dataset_err.answerkey_none_choices_labels", "A", strconv.Quote(key), "B", strings.Join(labels, ", "))
	}
	return idx, nil
}

// hfChoices reads Hugging Face's choices {"text": [...], "label": [...]}
// (ARC, OpenBookQA): 2 to maxChoices texts, as many labels.
func hfChoices(raw []byte) (texts, labels []string, le *LineError) {
	if !isObject(raw) {
		return nil, nil, lineErr("choices", "dataset_err.choices_object_text_label", "A", kindOf(raw))
	}
	m := members(raw, "text", "label")
	rawT, rawL := m[0], m[1]
	if texts, le = stringList(rawT, "choices.text", 2, maxChoices); le != nil {
		return nil, nil, le
	}
	if labels, le = stringList(rawL, "choices.label", 2, maxChoices); le != nil {
		return nil, nil, le
	}
	if len(labels) != len(texts) {
		return nil, nil, lineErr("choices.label", "dataset_err.choices_has_texts_but", "A", len(texts), "B", len(labels))
	}
	return texts, labels, nil
}

// members returns the raw values of an object's named members, nil for
// those it lacks (the last of a repeated key wins).
func members(obj []byte, names ...string) [][]byte {
	out := make([][]byte, len(names))
	eachField(obj, func(k, v []byte) bool {
		for i, n := range names {
			if keyIs(k, n) {
				out[i] = v
			}
		}
		return true
	})
	return out
}

// labelIndex reads a label given as an integer or as a string of digits
// (Hugging Face's HellaSwag writes "3").
func labelIndex(raw []byte) (int64, bool) {
	if s, ok := decodeString(raw); ok {
		if s == "" || len(s) > 3 || strings.Trim(s, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	return integer(raw)
}

// hellaswag normalises a HellaSwag line with lm-eval's preprocessing.
func (p *Parser) hellaswag(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	var ctx string
	switch {
	case f.ctxA != nil:
		a, ok := decodeString(f.ctxA)
		if !ok {
			return r, lineErr("ctx_a", "dataset_err.ctx_a_string", "A", kindOf(f.ctxA))
		}
		b := ""
		if !absent(f.ctxB) {
			if b, ok = decodeString(f.ctxB); !ok {
				return r, lineErr("ctx_b", "dataset_err.ctx_b_string", "A", kindOf(f.ctxB))
			}
		}
		ctx = a + " " + pyCapitalize(b)
	case f.ctx != nil:
		c, ok := decodeString(f.ctx)
		if !ok {
			return r, lineErr("ctx", "dataset_err.ctx_string", "A", kindOf(f.ctx))
		}
		ctx = c
	default:
		return r, lineErr("ctx", "dataset_err.ctx_missing")
	}
	endings, le := stringList(f.endings, "endings", 4, 4)
	if le != nil {
		return r, le
	}
	label, ok := labelIndex(f.label)
	if !ok {
		return r, lineErr("label", "dataset_err.ending_index", "A", kindOf(f.label))
	}
	if label < 0 || label > 3 {
		return r, lineErr("label", "dataset_err.ending_out_of_range", "A", label)
	}
	query := ctx
	if !absent(f.activityLabel) {
		act, le := categoryOf(f.activityLabel, "activity_label")
		if le != nil {
			return r, le
		}
		r.category = act
		query = act + ": " + ctx
	}
	pre := make([]string, len(endings))
	for i, e := range endings {
		pre[i] = hellaswagPreprocess(e)
	}
	r.id = "hellaswag-" + strconv.Itoa(itemNo)
	r.shot = &Shot{Query: lettered(hellaswagPreprocess(query), pre), Answer: " " + string(rune('A'+label))}
	r.ref = p.choiceRef(endings, int(label))
	r.answer, r.choices = true, true
	return r, nil
}

// bracketed matches lm-eval's HellaSwag pattern "\[.*?\]" (no newline
// inside, as Python's "." does not match one either).
var bracketed = regexp.MustCompile(`\[.*?\]`)

// hellaswagPreprocess is lm-eval's hellaswag preprocess: strip, " [title]"
// becomes ". ", anything in brackets goes, double spaces become single
// (one pass, as Python's str.replace).
func hellaswagPreprocess(s string) string {
	s = pyStrip(s)
	s = strings.ReplaceAll(s, " [title]", ". ")
	s = bracketed.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, "  ", " ")
}

// pyIsSpace is Python's str.isspace for one character: Unicode White_Space
// plus the information separators U+001C to U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyStrip is Python's str.strip() without arguments.
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyCapitalize is Python's str.capitalize: the first character in title
// case, the rest in lower case.
func pyCapitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToTitle(r)) + strings.ToLower(s[n:])
}

// truthfulQA normalises a TruthfulQA multiple-choice line as MC1: the one
// choice of mc1_targets labelled 1 is right.
func (p *Parser) truthfulQA(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	q, le := textOf(f.question, "question")
	if le != nil {
		return r, le
	}
	if !isObject(f.mc1Targets) {
		return r, lineErr("mc1_targets", "dataset_err.mc1_targets_object_choices", "A", kindOf(f.mc1Targets))
	}
	m := members(f.mc1Targets, "choices", "labels")
	rawC, rawL := m[0], m[1]
	choices, le := stringList(rawC, "mc1_targets.choices", 2, maxChoices)
	if le != nil {
		return r, le
	}
	if !isArray(rawL) {
		return r, lineErr("mc1_targets.labels", "dataset_err.mc1_targets_labels_array", "A", kindOf(rawL))
	}
	right, n := -1, 0
	eachElem(rawL, func(v []byte) bool {
		x, ok := integer(v)
		switch {
		case !ok || (x != 0 && x != 1):
			le = lineErr(fmt.Sprintf("mc1_targets.labels[%d]", n), "dataset_err.label_0_1")
		case x == 1 && right >= 0:
			le = lineErr(fmt.Sprintf("mc1_targets.labels[%d]", n), "dataset_err.mc1_has_exactly_one")
		case x == 1:
			right = n
		}
		n++
		return le == nil && n <= maxChoices
	})
	switch {
	case le != nil:
		return r, le
	case n != len(choices):
		return r, lineErr("mc1_targets.labels", "dataset_err.mc1_targets_has_choices", "A", len(choices), "B", n)
	case right < 0:
		return r, lineErr("mc1_targets.labels", "dataset_err.no_choice_labelled_1")
	}
	r.id = "truthfulqa-" + strconv.Itoa(itemNo)
	p.letteredItem(&r, pyStrip(q), choices, right)
	return r, nil
}

// mbpp normalises an MBPP line. The reference keeps what execution-based
// scoring reads: task_id, text, code, test_list, test_setup_code and
// challenge_test_list (the last two "" and [] when the line has none).
func (p *Parser) mbpp(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	text, le := textOf(f.text, "text")
	if le != nil {
		return r, le
	}
	code, ok := decodeString(f.code)
	if !ok {
		return r, lineErr("code", "dataset_err.code_string", "A", kindOf(f.code))
	}
	tests, le := stringList(f.testList, "test_list", 1, 1000)
	if le != nil {
		return r, le
	}
	setup := []byte(`""`)
	if !absent(f.testSetupCode) {
		if !isString(f.testSetupCode) {
			return r, lineErr("test_setup_code", "dataset_err.test_setup_code_string", "A", kindOf(f.testSetupCode))
		}
		setup = f.testSetupCode
	}
	challenge := []byte(`[]`)
	if !absent(f.challengeTL) {
		if _, le := stringList(f.challengeTL, "challenge_test_list", 0, 1000); le != nil {
			return r, le
		}
		challenge = f.challengeTL
	}
	taskID := []byte("null")
	r.id = "mbpp-" + strconv.Itoa(itemNo)
	switch {
	case absent(f.taskID):
	case isIntegerLiteral(f.taskID):
		taskID = f.taskID
		r.id, r.idField = "mbpp-"+string(f.taskID), "task_id"
	case isString(f.taskID):
		id, le := customID(f.taskID, "task_id")
		if le != nil {
			return r, le
		}
		taskID = f.taskID
		r.id, r.idField = id, "task_id"
	default:
		return r, lineErr("task_id", "dataset_err.task_id_integer_string", "A", kindOf(f.taskID))
	}
	if len(r.id) > maxCustomIDRunes {
		return r, lineErr("task_id", "dataset_err.task_id_may_at", "A", maxCustomIDRunes-5)
	}
	r.completion = true
	r.shot = &Shot{
		Query: "You are an expert Python programmer, and here is your task: " + text +
			" Your code should pass these tests:\n\n" + strings.Join(tests, "\n") + "\n[BEGIN]\n",
		Answer:     code + "\n[DONE]",
		Completion: true,
		Stop:       []string{"[DONE]"},
	}
	r.ref = append(make([]byte, 0, len(f.text)+len(f.code)+len(f.testList)+len(setup)+len(challenge)+120), `{"task_id":`...)
	r.ref = append(r.ref, taskID...)
	r.ref = append(r.ref, `,"text":`...)
	r.ref = append(r.ref, f.text...)
	r.ref = append(r.ref, `,"code":`...)
	r.ref = append(r.ref, f.code...)
	r.ref = append(r.ref, `,"test_list":`...)
	r.ref = append(r.ref, f.testList...)
	r.ref = append(r.ref, `,"test_setup_code":`...)
	r.ref = append(r.ref, setup...)
	r.ref = append(r.ref, `,"challenge_test_list":`...)
	r.ref = append(r.ref, challenge...)
	r.ref = append(r.ref, '}')
	return r, nil
}

// maxShotBytes bounds the solved examples held for k-shot prompts.
const maxShotBytes = 64 << 20

// kshotState holds, per group, the first k+1 items until all of them are
// known: each of those gets the other k as its examples; every later item
// of the group gets the first k. Examples are thus the earliest items of
// the group in file order, never the item itself (as lm-eval's "first_n"
// sampler takes the first items of the few-shot split). MMLU's group is
// the subject (lm-eval takes each subject's examples from that subject's
// dev split); the other suites' is the whole file, since their categories
// (HellaSwag's activity labels) can be too small to give k examples.
// Items come out as soon as their examples are known.
type kshotState struct {
	cats  map[string]*catShots
	ready []Item
	head  int
	bytes int
}

type catShots struct {
	first []*shot
	held  []Item // the first k+1 items while the category has fewer
}

// pop returns the next item whose prompt is complete.
func (k *kshotState) pop() (Item, bool) {
	if k.head < len(k.ready) {
		it := k.ready[k.head]
		k.ready[k.head] = Item{}
		k.head++
		if k.head == len(k.ready) {
			k.ready, k.head = k.ready[:0], 0
		}
		return it, true
	}
	return Item{}, false
}

// holdForShots files a parsed item under its category and queues what
// has become complete.
func (p *Parser) holdForShots(it Item) {
	sh := p.lastShot
	if sh == nil {
		p.fileError(i18n.M("dataset_err.shots_k_shot_examples", "A", p.format))
		p.done = true
		return
	}
	k := &p.kshot
	if k.cats == nil {
		k.cats = map[string]*catShots{}
	}
	c := k.cats[sh.Group]
	if c == nil {
		c = &catShots{}
		k.cats[sh.Group] = c
	}
	if len(c.first) > p.shots {
		it.Request = p.request(sh, c.first[:p.shots])
		k.ready = append(k.ready, it)
		return
	}
	k.bytes += sh.size() + len(it.Request) + len(it.Reference) + len(it.CustomID)
	if k.bytes > maxShotBytes {
		p.fileError(i18n.M("dataset_err.first_items_each_category", "A", p.shots+1, "B", p.shots, "C", maxShotBytes>>20))
		p.done = true
		return
	}
	c.first = append(c.first, sh)
	c.held = append(c.held, it)
	if len(c.first) <= p.shots {
		return
	}
	for i, h := range c.held {
		ex := make([]*shot, 0, p.shots)
		ex = append(ex, c.first[:i]...)
		ex = append(ex, c.first[i+1:]...)
		h.Request = p.request(c.first[i], ex)
		k.ready = append(k.ready, h)
	}
	c.held = nil
}

// endShots reports the categories too small for the shots asked for.
func (p *Parser) endShots() {
	if p.shots == 0 || p.kshot.cats == nil {
		return
	}
	var small []string
	for name, c := range p.kshot.cats {
		if len(c.first) <= p.shots {
			small = append(small, name)
		}
	}
	if len(small) == 0 {
		return
	}
	slices.Sort(small)
	c := p.kshot.cats[small[0]]
	what := i18n.M("dataset_err.subject_has", "Subject", strconv.Quote(small[0]))
	if small[0] == "" {
		what = i18n.M("dataset_err.file_has")
	}
	var more any = ""
	if len(small) > 1 {
		more = i18n.M("dataset_err.more_subjects", "N", len(small)-1)
	}
	p.fileError(i18n.M("dataset_err.shot_prompts_need_at", "A", p.shots, "B", p.shots+1, "C", what, "D", len(c.first), "E", more))
	for _, c := range p.kshot.cats {
		c.held = nil
	}
}
