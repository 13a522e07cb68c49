package dataset

import (
	"github.com/ruckus/ruckus/app/i18n"
	"slices"
	"strconv"
	"strings"
)

// WinoGrande, OpenBookQA, TriviaQA, Natural Questions open and CodeXGLUE
// code-to-text, each from its lm-evaluation-harness task (and the
// references its scorer ports, app/score):
//
//   - WinoGrande (lm_eval/tasks/winogrande, preprocess_winogrande.py):
//     lm-eval compares the likelihood of the text after the blank given
//     each option's context. Ruckus generates, so it asks the choice: the
//     sentence, then lm-eval's two complete texts (doc_to_choice's
//     context + the target delimiter " " + doc_to_target) lettered A and
//     B; the right letter is doc_to_text's answer index. Scored by choice.
//   - OpenBookQA (openbookqa.yaml): question_stem with choices.text
//     lettered in file order; the answer is
//     choices.label.index(answerKey.lstrip()). Scored by choice.
//   - TriviaQA (triviaqa/default.yaml): "Question: {question}?\nAnswer:"
//     sent to /v1/completions, stopping at "\n", "." and ",", as lm-eval
//     generates; a solved example's answer is the first alias. Scored by
//     the official evaluation (triviaqa-em, triviaqa-f1) over the
//     normalised aliases, the ground truths triviaqa_evaluation.py reads.
//   - Natural Questions open (nq_open/nq_open.yaml): the description
//     "Answer these questions:\n\n", "Q: {question}?\nA:", examples
//     separated by "\n", the same stops; scored like TriviaQA over the
//     answer list.
//   - CodeXGLUE code-to-text (code_x_glue/code-text utils.py): the code
//     tokens joined by spaces is the input and the docstring tokens joined
//     by spaces the reference, as CodeXGLUE's run.py and lm-eval read them.
//     lm-eval continues the bare code; Ruckus asks a chat model for the
//     summary with an instruction. Scored by codexglue-bleu.

// winogrande normalises a WinoGrande line.
func (p *Parser) winogrande(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	sentence, le := textOf(f.sentence, "sentence")
	if le != nil {
		return r, le
	}
	blank := strings.IndexByte(sentence, '_')
	if blank < 0 {
		return r, lineErr("sentence", "dataset_err.sentence_hold_blank_options")
	}
	opts := make([]string, 2)
	for i, raw := range [][]byte{f.option1, f.option2} {
		field := "option" + strconv.Itoa(i+1)
		if opts[i], le = textOf(raw, field); le != nil {
			return r, le
		}
	}
	if absent(f.answer) {
		return r, lineErr("answer", "dataset_err.answer_1_2_right", "A", i18n.M("dataset_err.test_split_missing"))
	}
	ans, ok := decodeString(f.answer)
	if !ok {
		if n, isInt := integer(f.answer); isInt {
			ans, ok = strconv.FormatInt(n, 10), true
		}
	}
	if !ok || (ans != "1" && ans != "2") {
		what := kindOf(f.answer)
		if ans == "" && isString(f.answer) {
			what = i18n.M("dataset_err.test_split")
		}
		return r, lineErr("answer", "dataset_err.answer_1_2_right", "A", what)
	}
	choices := WinoGrandeChoices(sentence, opts[0], opts[1])
	idx := int(ans[0] - '1')
	r.id = "winogrande-" + strconv.Itoa(itemNo)
	if !absent(f.qID) { // the release's question id
		if r.id, le = customID(f.qID, "qID"); le != nil {
			return r, le
		}
		r.idField = "qID"
	}
	p.letteredItem(&r, pyStrip(sentence), choices, idx)
	return r, nil
}

// WinoGrandeChoices are the two texts lm-eval's winogrande compares:
// doc_to_choice's contexts (the sentence up to the blank, then the
// option), each followed by the target delimiter " " and doc_to_target
// (the rest of the sentence after the blank, stripped). The sentence
// must hold a "_".
func WinoGrandeChoices(sentence, option1, option2 string) []string {
	i := strings.IndexByte(sentence, '_')
	target := pyStrip(sentence[i+1:])
	return []string{sentence[:i] + option1 + " " + target, sentence[:i] + option2 + " " + target}
}

// openBookQA normalises an OpenBookQA line.
func (p *Parser) openBookQA(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	stem, texts, labels, le := obqaQuestion(f)
	if le != nil {
		return r, le
	}
	key, ok := decodeString(f.answerKey)
	if !ok {
		return r, lineErr("answerKey", "dataset_err.answerkey_string_choice_label", "A", kindOf(f.answerKey))
	}
	idx := slices.Index(labels, strings.TrimLeftFunc(key, pyIsSpace)) // answerKey.lstrip()
	if idx < 0 {
		return r, lineErr("answerKey", "dataset_err.answerkey_none_choices_labels", "A", strconv.Quote(key), "B", strings.Join(labels, ", "))
	}
	if r.id, r.idField, le = itemID(f.id, "openbookqa-", itemNo); le != nil {
		return r, le
	}
	p.letteredItem(&r, pyStrip(stem), texts, idx)
	return r, nil
}

// obqaQuestion reads an OpenBookQA line's stem and choices: Hugging
// Face's question_stem and choices{text[], label[]}, or the release's
// AI2 question{stem, choices[{text, label}]}.
func obqaQuestion(f *fields) (stem string, texts, labels []string, le *LineError) {
	if f.questionStem == nil {
		return ai2Question(f.question)
	}
	if stem, le = textOf(f.questionStem, "question_stem"); le != nil {
		return "", nil, nil, le
	}
	texts, labels, le = hfChoices(f.choices)
	return stem, texts, labels, le
}

// itemID is a line's own "id" (a string or an integer), else prefix and
// the item's number.
func itemID(raw []byte, prefix string, itemNo int) (id, field string, le *LineError) {
	switch {
	case absent(raw):
		return prefix + strconv.Itoa(itemNo), "", nil
	case isString(raw):
		id, le := customID(raw, "id")
		return id, "id", le
	case isIntegerLiteral(raw):
		return string(raw), "id", nil
	}
	return "", "", lineErr("id", "dataset_err.id_string_integer", "A", kindOf(raw))
}

// openQAStops are lm-eval's generation stops for TriviaQA and NQ open.
var openQAStops = []string{"\n", ".", ","}

// maxAliases bounds an item's acceptable answers.
const maxAliases = 1000

// triviaQAKeys names a TriviaQA line's keys: Hugging Face's, or its
// release's (Question, QuestionId, Answer{Aliases, NormalizedAliases,
// Value}).
type triviaQAKeys struct {
	question, id, answer, aliases, normalized, value string
}

var (
	triviaQAHF      = triviaQAKeys{"question", "question_id", "answer", "aliases", "normalized_aliases", "value"}
	triviaQARelease = triviaQAKeys{"Question", "QuestionId", "Answer", "Aliases", "NormalizedAliases", "Value"}
)

// triviaQA normalises a TriviaQA line in either shape (rc.nocontext or
// any configuration: the evidence is not read).
func (p *Parser) triviaQA(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	k, rawQ, rawA, rawID := triviaQAHF, f.question, f.answer, f.questionID
	if f.questionCap != nil {
		k, rawQ, rawA, rawID = triviaQARelease, f.questionCap, f.answerCap, f.questionIDCap
	}
	q, le := textOf(rawQ, k.question)
	if le != nil {
		return r, le
	}
	if !isObject(rawA) {
		return r, lineErr(k.answer, "dataset_err.answer_object_value_aliases", "A", kindOf(rawA))
	}
	m := members(rawA, k.aliases, k.normalized, k.value)
	rawAliases, rawNorm, rawValue := m[0], m[1], m[2]
	aliases, le := stringList(rawAliases, k.answer+"."+k.aliases, 1, maxAliases)
	if le != nil {
		return r, le
	}
	truths := aliases
	if !absent(rawNorm) {
		if truths, le = stringList(rawNorm, k.answer+"."+k.normalized, 1, maxAliases); le != nil {
			return r, le
		}
	}
	value := aliases[0]
	if !absent(rawValue) {
		if value, le = textOf(rawValue, k.answer+"."+k.value); le != nil {
			return r, le
		}
	}
	r.id, r.idField = "triviaqa-"+strconv.Itoa(itemNo), ""
	if !absent(rawID) {
		if r.id, le = customID(rawID, k.id); le != nil {
			return r, le
		}
		r.idField = k.id
	}
	r.completion = true
	r.shot = &Shot{Query: "Question: " + q + "?\nAnswer:", Answer: " " + aliases[0], Completion: true, Stop: openQAStops}
	r.ref = p.aliasesRef(truths, aliases, value)
	r.answer = true
	return r, nil
}

// nqOpen normalises a Natural Questions open line.
func (p *Parser) nqOpen(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	q, le := textOf(f.question, "question")
	if le != nil {
		return r, le
	}
	answers, le := stringList(f.answer, "answer", 1, maxAliases)
	if le != nil {
		return r, le
	}
	r.id = "nq-open-" + strconv.Itoa(itemNo)
	r.completion = true
	r.shot = &Shot{Head: "Answer these questions:\n\n", Query: "Q: " + q + "?\nA:", Answer: " " + answers[0], Sep: "\n",
		Completion: true, Stop: openQAStops}
	r.ref = p.aliasesRef(answers, nil, "")
	r.answer = true
	return r, nil
}

// aliasesRef is an open-QA reference: "answer" the ground truths the
// scorer takes the best of, then the aliases and value as given.
func (p *Parser) aliasesRef(truths, aliases []string, value string) []byte {
	ref := append(make([]byte, 0, 128), `{"answer":`...)
	ref = p.appendStrings(ref, truths)
	if aliases != nil {
		ref = append(ref, `,"aliases":`...)
		ref = p.appendStrings(ref, aliases)
		ref = append(ref, `,"value":`...)
		ref = p.appendString(ref, value)
	}
	return append(ref, '}')
}

// appendStrings appends a JSON array of strings.
func (p *Parser) appendStrings(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = p.appendString(dst, s)
	}
	return append(dst, ']')
}

// maxCodeTokens bounds a CodeXGLUE line's token lists.
const maxCodeTokens = 100000

// codeToText normalises a CodeXGLUE code-to-text line.
func (p *Parser) codeToText(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	codeToks, le := stringList(f.codeTokens, "code_tokens", 1, maxCodeTokens)
	if le != nil {
		return r, le
	}
	docToks, le := stringList(f.docstringTokens, "docstring_tokens", 0, maxCodeTokens)
	if le != nil {
		return r, le
	}
	// lm-eval's doc_to_text and doc_to_target (CodeXGLUE run.py's
	// read_examples): tokens joined by spaces, line breaks dropped,
	// whitespace collapsed.
	code := strings.Join(pyFields(strings.ReplaceAll(strings.Join(codeToks, " "), "\n", " ")), " ")
	doc := strings.Join(pyFields(strings.ReplaceAll(strings.Join(docToks, " "), "\n", "")), " ")
	if doc == "" {
		return r, lineErr("docstring_tokens", "dataset_err.docstring_tokens_hold_reference")
	}
	fn := "function"
	if !absent(f.language) {
		l, le := categoryOf(f.language, "language")
		if le != nil {
			return r, le
		}
		r.category = l
		if l != "" {
			fn = l + " function"
		}
	}
	r.id = "codexglue-" + strconv.Itoa(itemNo)
	r.shot = &Shot{
		Query:  "Summarize what this " + fn + " does in one sentence, as the first line of its documentation would.\n\n" + code + "\nSummary:",
		Answer: " " + doc,
	}
	r.ref = append(make([]byte, 0, len(doc)+16), `{"answer":`...)
	r.ref = p.appendString(r.ref, doc)
	r.ref = append(r.ref, '}')
	r.answer = true
	return r, nil
}

// pyFields is Python's str.split() without arguments.
func pyFields(s string) []string { return strings.FieldsFunc(s, pyIsSpace) }
