package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ruckus/ruckus/app/i18n"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The two endpoints a normalised request may target.
const (
	urlChat       = "/v1/chat/completions"
	urlCompletion = "/v1/completions"
)

// fields holds the raw values of the top-level keys any format uses; nil
// means the key is absent. When a key appears twice the last one wins, as
// with encoding/json and Python's json module.
type fields struct {
	customID, method, url, body                           []byte
	id, prompt, messages, reference, answer               []byte
	choices, label                                        []byte
	question, taskID, test, entryPoint, canonicalSolution []byte

	// The standard suites' keys (suites.go).
	subject, answerKey, category                     []byte
	ctx, ctxA, ctxB, endings, activityLabel          []byte
	mc1Targets                                       []byte
	text, code, testList, testSetupCode, challengeTL []byte

	// The open-domain and further suites' keys (suites_more.go).
	sentence, option1, option2, questionStem, questionID []byte
	codeTokens, docstringTokens, language                []byte

	// The suites' release files' own keys (format_table.go): TriviaQA's
	// Question, QuestionId and Answer, WinoGrande's qID, OpenBookQA's
	// fact1, and the Data of TriviaQA's one-document release.
	questionCap, questionIDCap, answerCap, qID, fact1, data []byte
}

// set records one top-level member; key is as written between its quotes.
func (f *fields) set(key, v []byte) {
	if bytes.IndexByte(key, '\\') >= 0 {
		key = []byte(keyName(key))
	}
	switch string(key) {
	case "custom_id":
		f.customID = v
	case "method":
		f.method = v
	case "url":
		f.url = v
	case "body":
		f.body = v
	case "id":
		f.id = v
	case "prompt":
		f.prompt = v
	case "messages":
		f.messages = v
	case "reference":
		f.reference = v
	case "answer":
		f.answer = v
	case "choices":
		f.choices = v
	case "label":
		f.label = v
	case "question":
		f.question = v
	case "task_id":
		f.taskID = v
	case "test":
		f.test = v
	case "entry_point":
		f.entryPoint = v
	case "canonical_solution":
		f.canonicalSolution = v
	default:
		f.setSuite(string(key), v)
	}
}

// is reports whether the line has one of the shapes of format fm.
func (f *fields) is(fm Format) bool {
	for _, s := range formatShapes {
		if s.format == fm && s.matches(f) {
			return true
		}
	}
	return false
}

// shape returns the format whose keys the line has, or "" when none fits
// or more than one does (see detect).
func (f *fields) shape() Format {
	fm, amb := f.detect()
	if amb != nil {
		return ""
	}
	return fm
}

// needs describes a format's identifying keys for error messages.
func needs(fm Format) string {
	if s, ok := shapeOf(fm); ok {
		return s.shapeKeys()
	}
	return string(fm)
}

// hasOwnKey reports whether the line has a key only format fm uses, which
// makes it an incomplete fm line rather than a line of another format.
func (f *fields) hasOwnKey(fm Format) bool {
	switch fm {
	case FormatOpenAIBatch:
		return f.customID != nil || f.body != nil || f.method != nil || f.url != nil
	case FormatGSM8K:
		return f.question != nil
	case FormatHumanEval:
		return f.taskID != nil || f.test != nil || f.entryPoint != nil
	}
	return f.hasSuiteKey(fm)
}

// missing names the first identifying key of fm the line lacks.
func (f *fields) missing(fm Format) *LineError {
	miss := func(field string) *LineError {
		return lineErr(field, "dataset_err.missing", "A", strconv.Quote(field))
	}
	switch fm {
	case FormatOpenAIBatch:
		if f.customID == nil {
			return miss("custom_id")
		}
		return miss("body")
	case FormatGSM8K:
		if f.question == nil {
			return miss("question")
		}
		return miss("answer")
	case FormatHumanEval:
		switch {
		case f.taskID == nil:
			return miss("task_id")
		case f.prompt == nil:
			return miss("prompt")
		case f.test == nil:
			return miss("test")
		}
		return miss("entry_point")
	case FormatSimple:
		return lineErr("prompt", "dataset_err.line_has_neither_prompt")
	}
	return f.missingSuite(fm)
}

// norm is one line turned into an item, before it is numbered.
type norm struct {
	id              string
	idField         string // the key the id came from, for the duplicate message
	req, ref        []byte
	answer, choices bool // what the reference carries, for the suggestions
	completion      bool // the request targets /v1/completions
	category        string
	shot            *shot // the suite's own prompt pieces, for k-shot prompts
}

// parseLine validates one line and returns its item; ok is false for blank
// and invalid lines (the latter are recorded).
func (p *Parser) parseLine(raw []byte) (it Item, ok bool) {
	n := p.line
	b, lead := trimWS(raw)
	if len(b) == 0 {
		return Item{}, false // blank lines are allowed and skipped
	}
	if !p.checkObject(b, lead) {
		return Item{}, false
	}
	var f fields
	eachField(b, func(k, v []byte) bool {
		f.set(k, v)
		return true
	})
	fm, ok := p.lineFormat(&f)
	if !ok {
		return Item{}, false
	}
	r, le := p.normalise(fm, &f)
	if le != nil {
		p.lineError(n, le.Field, le.wording())
		return Item{}, false
	}
	if earlier, dup := p.checkID(r.id); dup {
		var src any = r.idField
		if r.idField == "" {
			src = i18n.M("dataset_err.generated_id")
		}
		p.lineError(n, "custom_id", i18n.M("dataset_err.already_used_on_line", "A", src, "B", strconv.Quote(r.id), "C", earlier))
		return Item{}, false
	}
	if p.count >= p.lim.MaxItems {
		p.fileError(i18n.M("dataset_err.file_has_more_than", "A", p.lim.MaxItems))
		p.done = true
		return Item{}, false
	}
	return p.accept(r), true
}

// checkObject reports whether the trimmed line b (lead bytes in from the
// start of the raw line) is valid UTF-8, valid JSON, an object and
// storable; it records why when not.
func (p *Parser) checkObject(b []byte, lead int) bool {
	n := p.line
	if !utf8.Valid(b) {
		p.lineError(n, "", i18n.M("dataset_err.line_valid_utf_8", "A", lead+firstInvalidUTF8(b)+1))
		return false
	}
	if !validJSON(b) {
		p.lineError(n, "", jsonErrorMessage(b, lead))
		return false
	}
	if b[0] != '{' {
		p.lineError(n, "", i18n.M("dataset_err.line_json_object", "A", kindOf(b)))
		return false
	}
	if path, problem, bad := unstorable(b); bad {
		p.lineError(n, path, problem)
		return false
	}
	return true
}

// lineFormat is the format the line is read as: the file's, detected on
// its first item line (or given), which every line must then have. It
// records why when the line does not fit.
func (p *Parser) lineFormat(f *fields) (Format, bool) {
	n := p.line
	fm := p.format
	detected, amb := f.detect()
	if amb != nil {
		p.lineError(n, amb.Field, amb.wording())
		return "", false
	}
	switch {
	case fm == "":
		if detected == "" {
			p.lineError(n, "", unknownShape(f))
			return "", false
		}
		p.format, p.formatAt = detected, n
		return detected, true
	case f.is(fm) && detected != fm && (isSuite(fm) || isSuite(detected)) && detected != FormatSimple:
		// Every line of a file is one format: a line that reads as
		// another suite is not taken as this one's.
		p.lineError(n, "", i18n.M("dataset_err.expected_format_detected_on", "A", fm, "B", p.formatAt, "C", needs(fm), "D", detected))
		return "", false
	case !f.is(fm):
		if other := f.shape(); other != "" && !f.hasOwnKey(fm) {
			p.lineError(n, "", i18n.M("dataset_err.expected_format_detected_on", "A", fm, "B", p.formatAt, "C", needs(fm), "D", other))
		} else {
			le := f.missing(fm)
			p.lineError(n, le.Field, le.wording())
		}
		return "", false
	}
	return fm, true
}

// normalise reads the line's fields in format fm into the request and
// reference stored for the item.
func (p *Parser) normalise(fm Format, f *fields) (norm, *LineError) {
	itemNo := p.count + 1
	switch fm {
	case FormatOpenAIBatch:
		return p.openAIBatch(f)
	case FormatSimple:
		return p.simple(f, itemNo)
	case FormatGSM8K:
		return p.gsm8k(f, itemNo)
	case FormatHumanEval:
		return p.humanEval(f)
	default:
		return p.suite(fm, f, itemNo)
	}
}

// accept counts r as the next item and returns it.
func (p *Parser) accept(r norm) Item {
	it := Item{Index: p.count, Line: p.line, CustomID: r.id, Request: r.req, Reference: r.ref, Category: r.category}
	if r.shot != nil && isSuite(p.format) {
		// GSM8K's and simple lines' pieces are read back from their
		// request and reference when a benchmark needs them (ShotOf).
		it.Shot, _ = json.Marshal(r.shot) // strings and bools only: cannot fail
	}
	p.count++
	if r.answer {
		p.nAnswer++
	}
	if r.choices {
		p.nChoices++
	}
	if r.completion {
		p.nComplete++
	}
	p.lastShot = r.shot
	return it
}

// jsonErrorMessage says what the JSON decoder found wrong, and where.
func jsonErrorMessage(b []byte, lead int) i18n.Message {
	err := json.Unmarshal(b, &struct{}{})
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return i18n.M("dataset_err.json_at_byte", "Byte", int64(lead)+se.Offset, "Detail", se.Error())
	}
	if err == nil {
		return i18n.M("dataset_err.json_invalid")
	}
	return i18n.M("dataset_err.json_invalid_detail", "Detail", err.Error())
}

// customID validates an id that is given as a string.
func customID(raw []byte, field string) (string, *LineError) {
	s, ok := decodeString(raw)
	switch {
	case !ok:
		return "", lineErr(field, "dataset_err.field_string", "A", field, "B", kindOf(raw))
	case s == "":
		return "", lineErr(field, "dataset_err.empty", "A", field)
	case utf8.RuneCountInString(s) > maxCustomIDRunes:
		return "", lineErr(field, "dataset_err.may_at_most_characters", "A", field, "B", maxCustomIDRunes)
	}
	return s, nil
}

// openAIBatch checks an OpenAI batch line; the body goes through as given
// so anything OpenAI accepts (tools, response_format, …) survives.
func (p *Parser) openAIBatch(f *fields) (norm, *LineError) {
	var r norm
	id, le := customID(f.customID, "custom_id")
	if le != nil {
		return r, le
	}
	if m, _ := decodeString(f.method); m != "POST" {
		return r, lineErr("method", "dataset_err.method_post")
	}
	url, _ := decodeString(f.url)
	if url != urlChat && url != urlCompletion {
		return r, lineErr("url", "dataset_err.url", "A", urlChat, "B", urlCompletion)
	}
	if !isObject(f.body) {
		return r, lineErr("body", "dataset_err.body_json_object", "A", kindOf(f.body))
	}
	var msgs, prompt []byte
	eachField(f.body, func(k, v []byte) bool {
		switch {
		case keyIs(k, "messages"):
			msgs = v
		case keyIs(k, "prompt"):
			prompt = v
		}
		return true
	})
	if url == urlChat {
		if le := checkBatchMessages(msgs); le != nil {
			return r, le
		}
	} else {
		switch {
		case absent(prompt):
			return r, lineErr("body.prompt", "dataset_err.body_for_needs_prompt", "A", urlCompletion)
		case !isString(prompt) && !isArray(prompt):
			return r, lineErr("body.prompt", "dataset_err.prompt_string_array", "A", kindOf(prompt))
		}
		r.completion = true
	}
	r.id, r.idField = id, "custom_id"
	r.req = make([]byte, 0, len(url)+len(f.body)+40)
	r.req = append(r.req, `{"method":"POST","url":"`...)
	r.req = append(r.req, url...)
	r.req = append(r.req, `","body":`...)
	r.req = append(r.req, f.body...)
	r.req = append(r.req, '}')
	if !absent(f.reference) {
		r.ref = appendAnswerRef(nil, f.reference, nil, nil)
		r.answer = true
	}
	return r, nil
}

// checkBatchMessages checks an OpenAI batch chat body's messages loosely:
// the body is OpenAI's own format, so only what every request needs.
func checkBatchMessages(msgs []byte) *LineError {
	const field = "body.messages"
	switch {
	case msgs == nil:
		return lineErr(field, "dataset_err.body_for_needs_messages", "A", urlChat)
	case !isArray(msgs):
		return lineErr(field, "dataset_err.messages_array", "A", kindOf(msgs))
	}
	var le *LineError
	i := 0
	eachElem(msgs, func(v []byte) bool {
		if !isObject(v) {
			le = lineErr(fmt.Sprintf("%s[%d]", field, i), "dataset_err.message_object", "A", kindOf(v))
			return false
		}
		i++
		return true
	})
	if le == nil && i == 0 {
		le = lineErr(field, "dataset_err.messages_empty")
	}
	return le
}

// roles are the chat roles OpenAI-compatible servers accept.
var roles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true, "developer": true}

// checkMessages checks a simple line's messages: a non-empty array of
// {role, content}; content is a string or an array of parts, or null on an
// assistant message (one that only calls tools).
func checkMessages(msgs []byte) *LineError {
	if !isArray(msgs) {
		return lineErr("messages", "dataset_err.messages_array_role_content", "A", kindOf(msgs))
	}
	var le *LineError
	i := 0
	eachElem(msgs, func(v []byte) bool {
		at := func(sub string) string { return fmt.Sprintf("messages[%d]%s", i, sub) }
		if !isObject(v) {
			le = lineErr(at(""), "dataset_err.message_role_content_object", "A", kindOf(v))
			return false
		}
		var role, content []byte
		eachField(v, func(k, v []byte) bool {
			switch {
			case keyIs(k, "role"):
				role = v
			case keyIs(k, "content"):
				content = v
			}
			return true
		})
		r, ok := decodeString(role)
		switch {
		case role == nil:
			le = lineErr(at(".role"), "dataset_err.role_missing")
		case !ok:
			le = lineErr(at(".role"), "dataset_err.role_string", "A", kindOf(role))
		case !roles[r]:
			le = lineErr(at(".role"), "dataset_err.role_one_system_user", "A", strconv.Quote(r))
		case content == nil:
			le = lineErr(at(".content"), "dataset_err.content_missing")
		case isString(content) || isArray(content) || (isNull(content) && r == "assistant"):
		default:
			le = lineErr(at(".content"), "dataset_err.content_string_array_parts", "A", kindOf(content))
		}
		i++
		return le == nil
	})
	if le == nil && i == 0 {
		le = lineErr("messages", "dataset_err.messages_empty")
	}
	return le
}

// simple normalises the hand-written shape. Without an "id" the item is
// called "item-<n>", n its 1-based position among valid items.
func (p *Parser) simple(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	if f.prompt != nil && f.messages != nil {
		return r, lineErr("messages", "dataset_err.give_either_prompt_messages")
	}
	switch {
	case absent(f.id):
		r.id = "item-" + strconv.Itoa(itemNo)
	case isString(f.id):
		id, le := customID(f.id, "id")
		if le != nil {
			return r, le
		}
		r.id, r.idField = id, "id"
	default:
		if !isIntegerLiteral(f.id) {
			return r, lineErr("id", "dataset_err.id_string_integer", "A", kindOf(f.id))
		}
		r.id, r.idField = string(f.id), "id"
	}
	if f.prompt != nil {
		if le := checkText(f.prompt, "prompt"); le != nil {
			return r, le
		}
		r.req = chatPrompt(f.prompt)
	} else {
		if le := checkMessages(f.messages); le != nil {
			return r, le
		}
		r.req = make([]byte, 0, len(f.messages)+64)
		r.req = append(r.req, `{"method":"POST","url":"`+urlChat+`","body":{"messages":`...)
		r.req = append(r.req, f.messages...)
		r.req = append(r.req, "}}"...)
	}

	ans := f.reference
	if absent(ans) {
		ans = f.answer
	}
	if absent(ans) {
		ans = nil
	}
	choices, label := f.choices, f.label
	if absent(choices) {
		choices = nil
	}
	if absent(label) {
		label = nil
	}
	switch {
	case choices != nil && label == nil:
		return r, lineErr("label", "dataset_err.choices_needs_label_index")
	case choices == nil && label != nil:
		return r, lineErr("choices", "dataset_err.label_needs_choices")
	case choices != nil:
		if le := checkChoices(choices, label); le != nil {
			return r, le
		}
		r.choices = true
	}
	if ans != nil || choices != nil {
		r.ref = appendAnswerRef(nil, ans, choices, label)
		r.answer = ans != nil
	}
	if f.prompt != nil && ans != nil && choices == nil && p.promptPieces() {
		r.shot = plainShot(f.prompt, ans)
	}
	// A category groups items for per-category scores (a safety set's
	// harmful and benign requests).
	if !absent(f.category) {
		c, le := categoryOf(f.category, "category")
		if le != nil {
			return r, le
		}
		r.category = c
	}
	return r, nil
}

// checkText requires a non-empty string.
func checkText(raw []byte, field string) *LineError {
	switch {
	case !isString(raw):
		return lineErr(field, "dataset_err.field_string", "A", field, "B", kindOf(raw))
	case isEmptyString(raw):
		return lineErr(field, "dataset_err.empty", "A", field)
	}
	return nil
}

// checkChoices requires a non-empty array of strings and a label that
// points into it: an integer index from 0, or a letter ("A" or "a" = 0).
func checkChoices(choices, label []byte) *LineError {
	if !isArray(choices) {
		return lineErr("choices", "dataset_err.choices_array_strings", "A", kindOf(choices))
	}
	var le *LineError
	n := 0
	eachElem(choices, func(v []byte) bool {
		if !isString(v) {
			le = lineErr(fmt.Sprintf("choices[%d]", n), "dataset_err.choice_string", "A", kindOf(v))
			return false
		}
		n++
		return true
	})
	if le != nil {
		return le
	}
	if n == 0 {
		return lineErr("choices", "dataset_err.choices_empty")
	}
	idx := int64(-1)
	if s, ok := decodeString(label); ok {
		if len(s) == 1 && s[0] >= 'A' && s[0] <= 'Z' {
			idx = int64(s[0] - 'A')
		} else if len(s) == 1 && s[0] >= 'a' && s[0] <= 'z' {
			idx = int64(s[0] - 'a')
		} else {
			return lineErr("label", "dataset_err.label_letter_z", "A", strconv.Quote(s))
		}
	} else if v, ok := integer(label); ok {
		idx = v
	} else {
		return lineErr("label", "dataset_err.label_index_from_0", "A", kindOf(label))
	}
	if idx < 0 || idx >= int64(n) {
		return lineErr("label", "dataset_err.label_out_range_for", "A", string(label), "B", n)
	}
	return nil
}

// appendAnswerRef builds the reference {"answer":…,"choices":…,"label":…}
// from raw values, leaving out those that are nil.
func appendAnswerRef(dst, ans, choices, label []byte) []byte {
	if dst == nil {
		dst = make([]byte, 0, len(ans)+len(choices)+len(label)+32)
	}
	dst = append(dst, '{')
	if ans != nil {
		dst = append(dst, `"answer":`...)
		dst = append(dst, ans...)
	}
	if choices != nil {
		if ans != nil {
			dst = append(dst, ',')
		}
		dst = append(dst, `"choices":`...)
		dst = append(dst, choices...)
		dst = append(dst, `,"label":`...)
		dst = append(dst, label...)
	}
	return append(dst, '}')
}

// chatPrompt wraps a raw JSON string as the one user message of a chat
// completions request. The string is copied as written, escapes and all.
func chatPrompt(prompt []byte) []byte {
	req := make([]byte, 0, len(prompt)+100)
	req = append(req, `{"method":"POST","url":"`+urlChat+`","body":{"messages":[{"role":"user","content":`...)
	req = append(req, prompt...)
	return append(req, "}]}}"...)
}

// gsm8k normalises a GSM8K line: the question becomes a chat message; the
// reference keeps the full worked answer and, as "final", the text after
// the last "####" (trimmed, thousands separators removed) that numeric
// scoring compares against. An answer without "####" is taken whole as the
// final answer; a numeric answer is used as is. Items are called
// "gsm8k-<n>", n their 1-based position.
func (p *Parser) gsm8k(f *fields, itemNo int) (norm, *LineError) {
	var r norm
	if le := checkText(f.question, "question"); le != nil {
		return r, le
	}
	var final string
	if s, ok := decodeString(f.answer); ok {
		if i := strings.LastIndex(s, "####"); i >= 0 {
			s = s[i+len("####"):]
		}
		final = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	} else if len(f.answer) > 0 && (f.answer[0] == '-' || (f.answer[0] >= '0' && f.answer[0] <= '9')) {
		final = string(f.answer)
	} else {
		return r, lineErr("answer", "dataset_err.answer_string_number", "A", kindOf(f.answer))
	}
	r.id = "gsm8k-" + strconv.Itoa(itemNo)
	r.req = chatPrompt(f.question)
	if p.promptPieces() {
		q, _ := decodeString(f.question)
		target, ok := decodeString(f.answer)
		if !ok {
			target = string(f.answer) // a number, as lm-eval's "{{answer}}" writes it
		}
		r.shot = questionAnswerShot(q, target, gsm8kStops)
	}
	r.ref = make([]byte, 0, len(f.answer)+len(final)+24)
	r.ref = append(r.ref, `{"answer":`...)
	r.ref = append(r.ref, f.answer...)
	r.ref = append(r.ref, `,"final":`...)
	r.ref = p.appendString(r.ref, final)
	r.ref = append(r.ref, '}')
	r.answer = true
	return r, nil
}

// humanEval normalises a HumanEval line into a plain completions request:
// the prompt is the start of a Python file (signature and docstring) that
// the model must continue verbatim, and the tests run prompt+completion.
// Wrapped in a chat message, models answer with prose and Markdown fences
// instead of the function body. The reference keeps what execution-based
// scoring needs; the item is called by its task_id.
func (p *Parser) humanEval(f *fields) (norm, *LineError) {
	var r norm
	id, le := customID(f.taskID, "task_id")
	if le != nil {
		return r, le
	}
	if le := checkText(f.prompt, "prompt"); le != nil {
		return r, le
	}
	if !isString(f.test) {
		return r, lineErr("test", "dataset_err.test_string", "A", kindOf(f.test))
	}
	if le := checkText(f.entryPoint, "entry_point"); le != nil {
		return r, le
	}
	sol := f.canonicalSolution
	if absent(sol) {
		sol = nil
	} else if !isString(sol) {
		return r, lineErr("canonical_solution", "dataset_err.canonical_solution_string", "A", kindOf(sol))
	}
	r.id, r.idField = id, "task_id"
	r.completion = true
	r.req = make([]byte, 0, len(f.prompt)+64)
	r.req = append(r.req, `{"method":"POST","url":"`+urlCompletion+`","body":{"prompt":`...)
	r.req = append(r.req, f.prompt...)
	r.req = append(r.req, "}}"...)
	r.ref = make([]byte, 0, len(f.taskID)+len(f.test)+len(f.entryPoint)+len(sol)+80)
	r.ref = append(r.ref, `{"task_id":`...)
	r.ref = append(r.ref, f.taskID...)
	r.ref = append(r.ref, `,"test":`...)
	r.ref = append(r.ref, f.test...)
	r.ref = append(r.ref, `,"entry_point":`...)
	r.ref = append(r.ref, f.entryPoint...)
	if sol != nil {
		r.ref = append(r.ref, `,"canonical_solution":`...)
		r.ref = append(r.ref, sol...)
	}
	r.ref = append(r.ref, '}')
	return r, nil
}

// appendString appends s as a JSON string without HTML escaping, so "<"
// stays "<" in what is stored and shown.
func (p *Parser) appendString(dst []byte, s string) []byte {
	p.encBuf.Reset()
	if err := p.enc.Encode(s); err != nil {
		return strconv.AppendQuote(dst, s) // unreachable: strings always encode
	}
	return append(dst, bytes.TrimSuffix(p.encBuf.Bytes(), []byte("\n"))...)
}
