package synth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/i18n"
)

// Bounds of an uploaded trace.
const (
	MaxTraceBytes     = 32 << 20
	MaxTraceLineBytes = 1 << 20
	// MaxTraceSeconds is the latest arrival a trace may have: a week.
	MaxTraceSeconds = 7 * 24 * 3600
	maxTraceErrors  = 50
)

// TraceLine is one request of a trace.
//
// The shape, one JSON object per line:
//
//	{"timestamp": 0.25, "input_length": 512, "output_length": 128}
//	{"timestamp": 1.5, "prompt": "Summarise …", "output_length": 64}
//
// timestamp is the send time in seconds from the trace's start (a finite
// number ≥ 0, at most MaxTraceSeconds, never less than the line before);
// input_length (1…MaxTokens) or prompt (non-empty text) says what to send;
// output_length (1…MaxTokens) is optional, the spec's output distribution
// drawing it when absent. Other fields are errors, so a misspelt one is not
// silently dropped. Blank lines are skipped.
type TraceLine struct {
	Timestamp    float64
	InputLength  int
	OutputLength int
	Prompt       string
}

// TraceError names the line (from 1) and field of a trace that is wrong.
type TraceError struct {
	Line    int
	Field   string
	Message string
	// Wording is Message as the catalogue words it, for a page in its
	// reader's language.
	Wording i18n.Message
}

func (e TraceError) Error() string { return e.Whole().English() }

// Whole is the error with its line and field, as the catalogue words it.
func (e TraceError) Whole() i18n.Message {
	if e.Field == "" {
		return i18n.M("synth.trace_line", "Line", e.Line, "Message", e.Wording)
	}
	return i18n.M("synth.trace_field", "Line", e.Line, "Field", e.Field, "Message", e.Wording)
}

// ParseTrace reads a JSONL trace, checking every line. It returns the
// lines when there is no error, else the first errors (at most 50 kept,
// the last one saying how many more there were) and no lines.
func ParseTrace(r io.Reader) ([]TraceLine, []TraceError) {
	var (
		out   []TraceLine
		errs  []TraceError
		nerrs int
		prev  = -1.0
		total int
	)
	fail := func(n int, field, key string, args ...any) {
		nerrs++
		if len(errs) < maxTraceErrors {
			m := i18n.M(key, args...)
			errs = append(errs, TraceError{Line: n, Field: field, Message: m.English(), Wording: m})
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		raw, err := readLine(br, MaxTraceLineBytes)
		total += len(raw)
		if errors.Is(err, errLineTooLong) {
			fail(n, "", "synth.trace_too_long", "Max", MaxTraceLineBytes)
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			fail(n, "", "synth.trace_read", "Err", err.Error())
			break
		}
		if total > MaxTraceBytes {
			fail(n, "", "synth.trace_too_large", "Max", MaxTraceBytes)
			break
		}
		if b := bytes.TrimSpace(raw); len(b) > 0 {
			if l, ok := parseTraceLine(n, b, prev, fail); ok {
				if len(out) >= MaxItems {
					fail(n, "", "synth.trace_too_many", "Max", MaxItems)
					break
				}
				prev = l.Timestamp
				out = append(out, l)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if nerrs == 0 && len(out) == 0 {
		fail(1, "", "synth.trace_empty")
	}
	if nerrs > 0 {
		if nerrs > len(errs) {
			m := i18n.M("synth.trace_more", "N", nerrs-len(errs))
			errs = append(errs, TraceError{Line: errs[len(errs)-1].Line, Message: m.English(), Wording: m})
		}
		return nil, errs
	}
	return out, nil
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its newline, refusing lines longer than
// limit so a trace without newlines cannot take the server's memory.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > limit+1 {
			// Skip to the end of the line so the next one is read whole.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return nil, errLineTooLong
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return buf, err
		}
		return buf[:len(buf)-1], nil
	}
}

// parseTraceLine checks one non-blank line; prev is the previous line's
// timestamp (−1 before the first).
func parseTraceLine(n int, b []byte, prev float64, fail func(int, string, string, ...any)) (TraceLine, bool) {
	var l TraceLine
	if !utf8.Valid(b) {
		fail(n, "", "synth.trace_utf8")
		return l, false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		fail(n, "", "synth.trace_object")
		return l, false
	}
	ok := true
	for k := range fields {
		switch k {
		case "timestamp", "input_length", "output_length", "prompt":
		default:
			fail(n, k, "synth.trace_unknown_field")
			ok = false
		}
	}
	ts, has := fields["timestamp"]
	if !has {
		fail(n, "timestamp", "synth.trace_no_timestamp")
		ok = false
	} else if err := json.Unmarshal(ts, &l.Timestamp); err != nil || bytes.Equal(ts, []byte("null")) {
		fail(n, "timestamp", "synth.trace_timestamp_number", "Got", clipped(ts))
		ok = false
	} else if math.IsNaN(l.Timestamp) || l.Timestamp < 0 || l.Timestamp > MaxTraceSeconds {
		fail(n, "timestamp", "synth.trace_timestamp_range", "Max", MaxTraceSeconds, "Got", fmt.Sprint(l.Timestamp))
		ok = false
	} else if l.Timestamp < prev {
		fail(n, "timestamp", "synth.trace_back", "At", fmt.Sprint(l.Timestamp), "Prev", fmt.Sprint(prev))
		ok = false
	}
	length := func(field string, dst *int) bool {
		raw, has := fields[field]
		if !has {
			return true
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil || bytes.Equal(raw, []byte("null")) || v != math.Trunc(v) || v < 1 || v > MaxTokens {
			fail(n, field, "synth.trace_tokens", "Max", MaxTokens, "Got", clipped(raw))
			return false
		}
		*dst = int(v)
		return true
	}
	ok = length("input_length", &l.InputLength) && ok
	ok = length("output_length", &l.OutputLength) && ok
	if raw, has := fields["prompt"]; has {
		if err := json.Unmarshal(raw, &l.Prompt); err != nil {
			fail(n, "prompt", "synth.trace_prompt_string", "Got", clipped(raw))
			ok = false
		} else if strings.TrimSpace(l.Prompt) == "" || strings.ContainsRune(l.Prompt, 0) {
			fail(n, "prompt", "synth.trace_prompt_text")
			ok = false
		}
	}
	_, hasIn := fields["input_length"]
	_, hasPrompt := fields["prompt"]
	switch {
	case hasIn && hasPrompt:
		fail(n, "prompt", "synth.trace_both")
		ok = false
	case !hasIn && !hasPrompt:
		fail(n, "input_length", "synth.trace_no_input")
		ok = false
	}
	return l, ok
}

// clipped shows at most 40 bytes of a value in an error.
func clipped(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
