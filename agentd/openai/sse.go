package openai

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// maxLine bounds one SSE line (and a non-streaming body). Runtimes are
// untrusted input: a line longer than this is not the protocol, and
// without a bound one bad server could exhaust the agent's memory.
const maxLine = 16 << 20

var errLineTooLong = fmt.Errorf("an event line is longer than %d MiB", maxLine>>20)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	// kind is the "event:" field; empty for the default "message".
	kind string
	// data is the "data:" lines joined by "\n". It is the reader's own
	// buffer, valid until the next call to next: a stream has an event per
	// token, and copying each one is garbage the reader can do without.
	data []byte
	// at is when the event was complete: when the blank line that
	// dispatches it (or the end of the stream) was read.
	at time.Time
	// unterminated is set for an event the stream ended in the middle of
	// (no blank line after it). It is still dispatched, because some
	// servers end the body right after "data: [DONE]\n"; whether it was
	// cut short is for the caller to judge from its data.
	unterminated bool
}

// sseReader reads server-sent events (the WHATWG EventSource format) from
// a response body. It accepts lines ending in "\n", "\r\n" or "\r";
// "data:" with or without the space after the colon; comments (lines
// starting with ':'); events of several data lines; and lines of any
// length up to maxLine; a byte order mark at the start. Fields other than "event" and "data" ("id",
// "retry", unknown ones) are ignored. Events with no data are not
// dispatched, as the format says.
//
// It reads with a bufio.Reader rather than a bufio.Scanner, whose default
// 64 KiB token limit a long JSON event from a runtime would exceed.
type sseReader struct {
	rd  *bufio.Reader
	now func() time.Time
	// onLine is called after every line read, comments included: the
	// connection is alive (it resets the stall timer).
	onLine func()

	crPending bool // the last line ended in '\r'; a '\n' next belongs to it
	started   bool // past the first line, where a byte order mark may be
	line      []byte
	data      []byte
	hasData   bool
	kind      string
}

func newSSEReader(r io.Reader, now func() time.Time, onLine func()) *sseReader {
	rd, ok := r.(*bufio.Reader)
	if !ok {
		rd = bufio.NewReaderSize(r, 64<<10)
	}
	if onLine == nil {
		onLine = func() {}
	}
	return &sseReader{rd: rd, now: now, onLine: onLine}
}

// next returns the next event. At the end of the stream it returns io.EOF
// (io.ErrUnexpectedEOF is reported as io.EOF: either way the stream
// ended); other read errors are returned as they are.
func (s *sseReader) next() (sseEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			if err == io.EOF && s.hasData {
				return s.dispatch(s.now(), true), nil
			}
			return sseEvent{}, err
		}
		t := s.now()
		s.onLine()
		if !s.started {
			s.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		switch {
		case len(line) == 0:
			if s.hasData {
				return s.dispatch(t, false), nil
			}
			s.kind = ""
		case line[0] == ':': // a comment, often a keep-alive
		default:
			field, value, found := bytes.Cut(line, []byte(":"))
			if found {
				value = bytes.TrimPrefix(value, []byte(" "))
			}
			switch string(field) {
			case "data":
				if s.hasData {
					s.data = append(s.data, '\n')
				}
				s.data = append(s.data, value...)
				s.hasData = true
			case "event":
				s.kind = string(value)
			}
		}
	}
}

func (s *sseReader) dispatch(t time.Time, unterminated bool) sseEvent {
	ev := sseEvent{kind: s.kind, data: s.data, at: t, unterminated: unterminated}
	s.data, s.hasData, s.kind = s.data[:0], false, ""
	return ev
}

// readLine returns the next line without its terminator. A last line
// without one is returned at the end of the stream; after it, io.EOF.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if _, err := s.rd.Peek(1); err != nil {
			if (err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)) && len(s.line) > 0 {
				return s.line, nil
			}
			return nil, err
		}
		buf, _ := s.rd.Peek(s.rd.Buffered())
		if s.crPending {
			s.crPending = false
			if buf[0] == '\n' {
				_, _ = s.rd.Discard(1)
				continue
			}
		}
		i := lineEnd(buf)
		if i < 0 {
			s.line = append(s.line, buf...)
			_, _ = s.rd.Discard(len(buf))
		} else {
			s.line = append(s.line, buf[:i]...)
			s.crPending = buf[i] == '\r'
			_, _ = s.rd.Discard(i + 1)
		}
		if len(s.line) > maxLine {
			return nil, errLineTooLong
		}
		if i >= 0 {
			return s.line, nil
		}
	}
}

// lineEnd is the index of the first '\r' or '\n' in buf, or -1: two
// vectorised byte searches, the second only over the line the first found
// (bytes.IndexAny tests every byte against a set, and showed in profiles).
func lineEnd(buf []byte) int {
	i := bytes.IndexByte(buf, '\n')
	head := buf
	if i >= 0 {
		head = buf[:i]
	}
	if j := bytes.IndexByte(head, '\r'); j >= 0 {
		return j
	}
	return i
}
