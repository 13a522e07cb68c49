package handlers

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// The request log must not read a streamed body to learn its size: that
// would hold a whole export in memory before the first byte went out. The
// stream here sends its second half only once the client has read the
// first, so a logger that drains it first never finishes.
func TestRequestLogLeavesStreamsStreaming(t *testing.T) {
	t.Parallel()
	var logged strings.Builder
	s := &server{Deps: Deps{Logger: slog.New(slog.NewTextHandler(&logged, nil))}}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(s.logRequests)
	firstRead := make(chan struct{})
	app.Get("/stream", func(c *fiber.Ctx) error {
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
			_, _ = w.WriteString("first half\n")
			_ = w.Flush()
			select {
			case <-firstRead:
				_, _ = w.WriteString("second half\n")
			case <-time.After(10 * time.Second):
				_, _ = w.WriteString("the client never saw the first half\n")
			}
		})
		return nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	res, err := http.Get("http://" + ln.Addr().String() + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "first half\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(firstRead)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "second half\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	if !strings.Contains(logged.String(), "bytes=-1") {
		t.Fatalf("log line: %s", logged.String())
	}
}
