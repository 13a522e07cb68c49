// Package resultimport reads results made outside Ruckus — an OpenAI batch
// output file (from the Batch API, `vllm run-batch` or another tool) or a
// simple {"custom_id","output"} JSONL — so they can be scored and compared
// with Ruckus's own runs. Each line is read into the store's record of it,
// store.ImportLine, which app/ingest copies into PostgreSQL as it is read;
// lines are matched to a dataset's items by custom_id; there are no
// timings.
package resultimport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/ruckus/ruckus/jobs"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

// Error names the line and field of a line Ruckus cannot read.
type Error struct {
	Line    int    `json:"line"`
	Field   string `json:"field"`
	Message string `json:"message"`
	// Wording is Message as the catalogue words it, for a page in its
	// reader's language.
	Wording i18n.Message `json:"-"`
}

// errAt is an Error in field, its message the catalogue's key with args;
// Message is its English.
func errAt(field, key string, args ...any) *Error {
	m := i18n.M(key, args...)
	return &Error{Field: field, Message: m.English(), Wording: m}
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Message) }

// MaxLineBytes bounds one line.
const MaxLineBytes = 16 << 20

// raw is the union of both formats.
type raw struct {
	CustomID *string         `json:"custom_id"`
	Output   *string         `json:"output"`
	Response json.RawMessage `json:"response"`
	Error    json.RawMessage `json:"error"`
}

type response struct {
	StatusCode int    `json:"status_code"`
	RequestID  string `json:"request_id"`
	Body       struct {
		ID      string `json:"id"`
		Choices []struct {
			Message *struct {
				Content *string `json:"content"`
			} `json:"message"`
			Text         *string `json:"text"`
			FinishReason string  `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     json.Number `json:"prompt_tokens"`
			CompletionTokens json.Number `json:"completion_tokens"`
		} `json:"usage"`
		Error json.RawMessage `json:"error"`
	} `json:"body"`
}

type batchError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Parse reads r line by line and calls fn for each result; see Parser.
func Parse(r io.Reader, fn func(store.ImportLine) error) error {
	p := NewParser(r)
	for {
		l, ok := p.Next()
		if !ok {
			return p.Err()
		}
		if err := fn(l); err != nil {
			return err
		}
	}
}

// Parser reads an import as a stream, one line at a time, so a file of
// any size costs the memory of its longest line: the only state that grows
// with the file is a hash per custom_id seen (to refuse duplicates), as in
// a dataset upload. A Parser is not safe for concurrent use.
type Parser struct {
	br   *bufio.Reader
	line int // lines read so far
	n    int // results returned
	seed maphash.Seed
	seen map[uint64]int32 // hash of custom_id → line; a collision (~2⁻⁶⁴ a pair) would be reported as a duplicate
	err  error
	done bool
}

// NewParser returns a parser over r; it reads nothing until Next.
func NewParser(r io.Reader) *Parser {
	return &Parser{br: bufio.NewReaderSize(r, 64<<10), seed: maphash.MakeSeed(), seen: map[uint64]int32{}}
}

// Next returns the next result. It returns false at the end of the input
// and at the first line it cannot take, which stops the parse: then Err
// says why (an *Error naming the line and field), or nil at the end. Blank
// lines are skipped.
func (p *Parser) Next() (store.ImportLine, bool) {
	for !p.done {
		b, err := readLine(p.br)
		if errors.Is(err, io.EOF) && len(b) == 0 {
			p.done = true
			break
		}
		p.line++
		if errors.Is(err, errTooLong) {
			return p.fail(lineErr(p.line, errAt("line", "import_err.line_too_long", "Max", MaxLineBytes>>20)))
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return p.fail(err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		l, perr := parseLine(b)
		if perr != nil {
			perr.Line = p.line
			return p.fail(perr)
		}
		h := maphash.String(p.seed, l.CustomID)
		if first, ok := p.seen[h]; ok {
			return p.fail(lineErr(p.line, errAt("custom_id", "import_err.repeated", "ID", fmt.Sprintf("%q", l.CustomID), "First", first)))
		}
		p.seen[h] = int32(min(p.line, math.MaxInt32))
		l.Line = p.line
		p.n++
		return l, true
	}
	return store.ImportLine{}, false
}

func (p *Parser) fail(err error) (store.ImportLine, bool) {
	p.err, p.done = err, true
	return store.ImportLine{}, false
}

// Err is why Next stopped early: an *Error for a line Ruckus cannot take,
// or the reader's own error; nil when the input was read to its end.
func (p *Parser) Err() error { return p.err }

// Count is the number of results returned so far.
func (p *Parser) Count() int { return p.n }

var errTooLong = errors.New("line too long")

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > MaxLineBytes {
			return nil, errTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// Bounds of what one line may carry: each value fits its column in
// results and is sane for what it is.
const (
	// MaxCustomIDChars is the longest custom_id, as datasets allow.
	MaxCustomIDChars = 256
	// MaxTokens bounds prompt_tokens and completion_tokens of one request:
	// more than any model's context (the registry allows 10,000,000).
	MaxTokens = 10_000_000
	// maxShortText bounds finish_reason, request_id and an error's code.
	maxShortText = 256
)

func parseLine(b []byte) (store.ImportLine, *Error) {
	var l store.ImportLine
	var r raw
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return l, errAt("line", "import_err.not_object", "Err", err.Error())
	}
	if r.CustomID == nil || strings.TrimSpace(*r.CustomID) == "" {
		return l, errAt("custom_id", "import_err.no_custom_id")
	}
	l.CustomID = *r.CustomID
	if e := checkText("custom_id", l.CustomID, MaxCustomIDChars, jobs.MaxCustomIDBytes); e != nil {
		return l, e
	}
	switch {
	case r.Output != nil:
		l.Status, l.Output, l.TokensEstimated = jobs.StatusOK, *r.Output, true
		l.CompletionTokens = len(strings.Fields(*r.Output))
		return l, checkText("output", l.Output, 0, jobs.MaxOutputBytes)
	case len(r.Response) == 0 && len(r.Error) == 0:
		return l, errAt("output", "import_err.no_output")
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		if e := parseBatchError(r.Error, &l); e != nil {
			return l, e
		}
	}
	if len(r.Response) > 0 && string(r.Response) != "null" {
		if e := parseResponse(r.Response, &l); e != nil {
			return l, e
		}
	}
	if l.Status == "" {
		return l, errAt("response", "import_err.null_response")
	}
	return l, nil
}

// parseBatchError reads a batch line's error into l: the request failed.
func parseBatchError(msg json.RawMessage, l *store.ImportLine) *Error {
	var e batchError
	if err := json.Unmarshal(msg, &e); err != nil {
		return errAt("error", "import_err.error_shape")
	}
	if fe := checkText("error.code", e.Code, maxShortText, jobs.MaxShortTextBytes); fe != nil {
		return fe
	}
	if fe := checkText("error.message", e.Message, 0, jobs.MaxResultErrorBytes); fe != nil {
		return fe
	}
	l.Status, l.ErrorClass, l.Error = jobs.StatusError, orDefault(e.Code, "batch_error"), e.Message
	return nil
}

// parseResponse reads a batch line's response into l: its status and
// request id, and unless the line failed already, the HTTP error or the
// first choice.
func parseResponse(msg json.RawMessage, l *store.ImportLine) *Error {
	var resp response
	if err := json.Unmarshal(msg, &resp); err != nil {
		return errAt("response", "import_err.batch_shape", "Err", err.Error())
	}
	if resp.StatusCode != 0 && (resp.StatusCode < 100 || resp.StatusCode > 599) {
		return errAt("response.status_code", "import_err.status", "Code", resp.StatusCode)
	}
	l.HTTPStatus, l.RequestID = resp.StatusCode, resp.RequestID
	field := "response.request_id"
	if l.RequestID == "" {
		l.RequestID, field = resp.Body.ID, "response.body.id"
	}
	if e := checkText(field, l.RequestID, maxShortText, jobs.MaxShortTextBytes); e != nil {
		return e
	}
	if l.Status == "" && resp.StatusCode != 0 && resp.StatusCode != 200 {
		// The error body as it came (raw JSON): its escapes stay text,
		// but its bytes must be UTF-8.
		msg := strings.TrimSpace(string(resp.Body.Error))
		if e := checkText("response.body.error", msg, 0, jobs.MaxResultErrorBytes); e != nil {
			return e
		}
		l.Status, l.ErrorClass, l.Error = jobs.StatusError, "http_"+fmt.Sprint(resp.StatusCode), msg
	}
	if l.Status == "" {
		return parseChoice(resp, l)
	}
	return nil
}

// parseChoice reads the response's first choice into l as its answer,
// with its usage (estimated from the answer when there is none).
func parseChoice(resp response, l *store.ImportLine) *Error {
	if len(resp.Body.Choices) == 0 {
		return errAt("response.body.choices", "import_err.no_choices")
	}
	ch := resp.Body.Choices[0]
	field := "response.body.choices[0].message.content"
	switch {
	case ch.Message != nil && ch.Message.Content != nil:
		l.Output = *ch.Message.Content
	case ch.Text != nil:
		l.Output, field = *ch.Text, "response.body.choices[0].text"
	default:
		return errAt("response.body.choices[0]", "import_err.no_content")
	}
	if e := checkText(field, l.Output, 0, jobs.MaxOutputBytes); e != nil {
		return e
	}
	if e := checkText("response.body.choices[0].finish_reason", ch.FinishReason, maxShortText, jobs.MaxShortTextBytes); e != nil {
		return e
	}
	l.Status, l.FinishReason = jobs.StatusOK, ch.FinishReason
	u := resp.Body.Usage
	if u == nil {
		l.TokensEstimated, l.CompletionTokens = true, len(strings.Fields(l.Output))
		return nil
	}
	var e *Error
	if l.PromptTokens, e = tokenCount("response.body.usage.prompt_tokens", u.PromptTokens); e != nil {
		return e
	}
	l.CompletionTokens, e = tokenCount("response.body.usage.completion_tokens", u.CompletionTokens)
	return e
}

// checkText refuses a string PostgreSQL text cannot hold (a NUL character,
// which JSON writes \u0000; invalid UTF-8), longer than max characters
// (0: no bound in characters) or than maxBytes, the most the database
// keeps of it (jobs/limits.go).
func checkText(field, s string, max, maxBytes int) *Error {
	switch {
	case len(s) > maxBytes:
		return errAt(field, "import_err.too_many_bytes", "Max", maxBytes)
	case strings.ContainsRune(s, 0):
		return errAt(field, "import_err.nul")
	case !utf8.ValidString(s):
		return errAt(field, "import_err.utf8")
	case max > 0 && utf8.RuneCountInString(s) > max:
		return errAt(field, "import_err.too_many_chars", "Max", max)
	}
	return nil
}

// tokenCount reads a token count: a whole number from 0 to MaxTokens
// (1e3 is a whole number; 1e12 and -1 are refused, not wrapped into a
// 32-bit column).
func tokenCount(field string, n json.Number) (int, *Error) {
	if n == "" {
		return 0, nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < 0 || f > MaxTokens {
		return 0, errAt(field, "import_err.tokens", "Max", MaxTokens, "Got", string(n))
	}
	return int(f), nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// lineErr is e found on line n.
func lineErr(n int, e *Error) *Error {
	e.Line = n
	return e
}
