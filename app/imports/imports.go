// Package imports reads results made outside Ruckus — an OpenAI batch
// output file (from the Batch API, `vllm run-batch` or another tool) or a
// simple {"custom_id","output"} JSONL — so they can be scored and compared
// with Ruckus's own runs. Lines are matched to a dataset's items by
// custom_id; there are no timings.
package imports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ruckus/ruckus/jobs"
)

// Line is one imported result.
type Line struct {
	CustomID         string
	Status           string // jobs.StatusOK or jobs.StatusError
	Output           string
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	// TokensEstimated: the line had no usage.
	TokensEstimated bool
	HTTPStatus      int
	RequestID       string
	ErrorClass      string
	Error           string
}

// Error names the line and field of a line Ruckus cannot read.
type Error struct {
	Line    int    `json:"line"`
	Field   string `json:"field"`
	Message string `json:"message"`
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
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
		Error json.RawMessage `json:"error"`
	} `json:"body"`
}

type batchError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Parse reads r line by line and calls fn for each result. A line it
// cannot read stops it with an *Error naming the line and field; a second
// line with a custom_id already seen is an error too. Blank lines are
// skipped.
func Parse(r io.Reader, fn func(Line) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	seen := map[string]int{}
	for n := 1; ; n++ {
		b, err := readLine(br)
		if errors.Is(err, io.EOF) && len(b) == 0 {
			return nil
		}
		if errors.Is(err, errTooLong) {
			return &Error{Line: n, Field: "line", Message: fmt.Sprintf("longer than %d MiB", MaxLineBytes>>20)}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		l, perr := parseLine(b)
		if perr != nil {
			perr.Line = n
			return perr
		}
		if first, ok := seen[l.CustomID]; ok {
			return &Error{Line: n, Field: "custom_id", Message: fmt.Sprintf("%q already appeared on line %d", l.CustomID, first)}
		}
		seen[l.CustomID] = n
		if err := fn(l); err != nil {
			return err
		}
	}
}

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

func parseLine(b []byte) (Line, *Error) {
	var l Line
	var r raw
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return l, &Error{Field: "line", Message: "not a JSON object: " + err.Error()}
	}
	if r.CustomID == nil || strings.TrimSpace(*r.CustomID) == "" {
		return l, &Error{Field: "custom_id", Message: "missing or empty: every line needs the custom_id of a dataset item"}
	}
	l.CustomID = *r.CustomID
	switch {
	case r.Output != nil:
		l.Status, l.Output, l.TokensEstimated = jobs.StatusOK, *r.Output, true
		l.CompletionTokens = len(strings.Fields(*r.Output))
		return l, nil
	case len(r.Response) == 0 && len(r.Error) == 0:
		return l, &Error{Field: "output", Message: `a line needs "output" (simple format) or "response"/"error" (OpenAI batch output)`}
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		var e batchError
		if err := json.Unmarshal(r.Error, &e); err != nil {
			return l, &Error{Field: "error", Message: "must be an object with code and message"}
		}
		l.Status, l.ErrorClass, l.Error = jobs.StatusError, orDefault(e.Code, "batch_error"), e.Message
	}
	if len(r.Response) > 0 && string(r.Response) != "null" {
		var resp response
		if err := json.Unmarshal(r.Response, &resp); err != nil {
			return l, &Error{Field: "response", Message: "not the batch output shape: " + err.Error()}
		}
		l.HTTPStatus, l.RequestID = resp.StatusCode, resp.RequestID
		if l.RequestID == "" {
			l.RequestID = resp.Body.ID
		}
		if l.Status == "" && resp.StatusCode != 0 && resp.StatusCode != 200 {
			l.Status, l.ErrorClass, l.Error = jobs.StatusError, "http_"+fmt.Sprint(resp.StatusCode), strings.TrimSpace(string(resp.Body.Error))
		}
		if l.Status == "" {
			if len(resp.Body.Choices) == 0 {
				return l, &Error{Field: "response.body.choices", Message: "no choices: nothing to import"}
			}
			ch := resp.Body.Choices[0]
			switch {
			case ch.Message != nil && ch.Message.Content != nil:
				l.Output = *ch.Message.Content
			case ch.Text != nil:
				l.Output = *ch.Text
			default:
				return l, &Error{Field: "response.body.choices[0]", Message: "has neither message.content nor text"}
			}
			l.Status, l.FinishReason = jobs.StatusOK, ch.FinishReason
			if u := resp.Body.Usage; u != nil {
				l.PromptTokens, l.CompletionTokens = u.PromptTokens, u.CompletionTokens
			} else {
				l.TokensEstimated, l.CompletionTokens = true, len(strings.Fields(l.Output))
			}
		}
	}
	if l.Status == "" {
		return l, &Error{Field: "response", Message: "null, and no error: nothing to import"}
	}
	return l, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
