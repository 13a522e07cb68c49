package launch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ring keeps the last len(buf) bytes written to it.
type ring struct {
	buf  []byte
	pos  int  // where the next byte goes
	full bool // the buffer has wrapped: buf[pos:] is older than buf[:pos]
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

func (r *ring) write(p []byte) {
	size := len(r.buf)
	if size == 0 {
		return
	}
	if len(p) >= size {
		copy(r.buf, p[len(p)-size:])
		r.pos, r.full = 0, true
		return
	}
	n := copy(r.buf[r.pos:], p)
	copy(r.buf, p[n:])
	if r.pos+len(p) >= size {
		r.full = true
	}
	r.pos = (r.pos + len(p)) % size
}

// bytes returns the kept bytes, oldest first, and whether older ones were
// dropped.
func (r *ring) bytes() ([]byte, bool) {
	if !r.full {
		return bytes.Clone(r.buf[:r.pos]), false
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...), true
}

// logSink receives a runtime's output: the log file, when there is one,
// and the tail. Writes never fail, so the runtime's output is never cut
// because a disk filled up.
type logSink struct {
	mu      sync.Mutex
	file    *os.File
	fileErr error
	tail    *ring
}

func newLogSink(path string, tailBytes int) (*logSink, error) {
	s := &logSink{tail: newRing(tailBytes)}
	if path == "" {
		return s, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("launch: log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("launch: open log: %w", err)
	}
	s.file = f
	return s, nil
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tail.write(p)
	s.writeFile(p)
	return len(p), nil
}

// note writes a line of agentd's own to the log file only.
func (s *logSink) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeFile([]byte("# " + fmt.Sprintf(format, args...) + "\n"))
}

func (s *logSink) writeFile(p []byte) {
	if s.file != nil && s.fileErr == nil {
		if _, err := s.file.Write(p); err != nil {
			s.fileErr = err
		}
	}
}

// close closes the file; later output still reaches the tail. It reports
// the first write error, if any.
func (s *logSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return s.fileErr
	}
	err := s.file.Close()
	s.file = nil
	if s.fileErr != nil {
		return s.fileErr
	}
	return err
}

// tailString is the kept output as text fit for storage: starting at a
// line when older output was dropped, valid UTF-8, without NUL bytes (a
// PostgreSQL text column takes neither).
func (s *logSink) tailString() string {
	s.mu.Lock()
	b, cut := s.tail.bytes()
	s.mu.Unlock()
	if cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(strings.ReplaceAll(string(b), "\x00", ""), "\uFFFD")
}

// errorTail is the end of a tail, short enough for an error message.
func errorTail(tail string) string {
	const maxBytes, maxLines = 4 << 10, 40
	tail = strings.TrimRight(tail, "\n")
	if tail == "" {
		return "(no output)"
	}
	if len(tail) > maxBytes {
		tail = tail[len(tail)-maxBytes:]
		if i := strings.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		tail = strings.ToValidUTF8(tail, "")
	}
	lines := strings.Split(tail, "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return strings.Join(lines, "\n")
}
