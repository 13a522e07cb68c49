package handlers

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/ruckus/ruckus/app/export"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
)

type resultStore interface {
	StreamResults(ctx context.Context, runIDs []int64, fn func(store.ResultRow) error) error
	ListResults(ctx context.Context, runID int64, f store.ResultFilter) ([]store.ResultListRow, error)
	ResultByIdx(ctx context.Context, runID int64, idx int) (store.ResultItem, error)
	ResultBySample(ctx context.Context, runID int64, idx, sample int) (store.ResultItem, error)
	RunExecOptions(ctx context.Context, runID int64) (json.RawMessage, error)
	CopyResultsCSV(ctx context.Context, w io.Writer, runIDs []int64, runColumns, raw bool) error
	RunSamples(ctx context.Context, runID int64, limit int) ([]store.SampleRow, error)
	LatencyPoints(ctx context.Context, runID int64, limit int) ([]store.LatencyPoint, error)
	RunErrorClasses(ctx context.Context, runID int64) ([]store.ErrorClassCount, error)
	RunCategoryScores(ctx context.Context, runID int64) ([]store.CategoryScores, error)
	RunDigests(ctx context.Context, runIDs []int64) (map[int64][]byte, error)
}

// Headers that carry the signed digests of the exported runs' results
// (app/attest): a run's as sha256:<hex>, a benchmark's runs' as
// <run id>=sha256:<hex>, comma-separated. Runs not signed yet are left out.
const (
	runDigestHeader        = "X-Ruckus-Results-Digest"
	benchmarkDigestsHeader = "X-Ruckus-Results-Digests"
)

// setDigests puts the runs' signed digests on the export's response.
func (s *server) setDigests(c *fiber.Ctx, ids []int64, one bool) error {
	ds, err := s.Store.RunDigests(c.UserContext(), ids)
	if err != nil {
		return err
	}
	if one {
		if d, ok := ds[ids[0]]; ok {
			c.Set(runDigestHeader, digestText(d))
		}
		return nil
	}
	var parts []string
	for _, id := range ids {
		if d, ok := ds[id]; ok {
			parts = append(parts, fmt.Sprintf("%d=%s", id, digestText(d)))
		}
	}
	if len(parts) > 0 {
		c.Set(benchmarkDigestsHeader, strings.Join(parts, ", "))
	}
	return nil
}

// exportTimeout bounds one streamed export.
const exportTimeout = 30 * time.Minute

// runOf finds run :id in a benchmark the viewer may read.
func (s *server) runOf(c *fiber.Ctx) (store.Benchmark, store.Run, error) {
	runID, err := idParam(c, "id", "run")
	if err != nil {
		return store.Benchmark{}, store.Run{}, err
	}
	bID, err := s.Store.BenchmarkOfRun(c.UserContext(), runID)
	if err != nil {
		return store.Benchmark{}, store.Run{}, lookup("run", err)
	}
	b, err := s.Store.BenchmarkByID(c.UserContext(), viewer(c), bID)
	if err != nil {
		return store.Benchmark{}, store.Run{}, lookup("run", err)
	}
	for _, r := range b.Runs {
		if r.ID == runID {
			return b, r, nil
		}
	}
	return store.Benchmark{}, store.Run{}, noSuch("run", nil)
}

// stream sends the body written by write after the handler returns, as
// it is written, in chunks. On a network connection the handler takes the
// connection over for that: fasthttp's own stream writer sends 4 KiB
// chunks with a write call each (measured: an export took 1.8× as long as
// psql's copy of the same rows) and must finish the whole body within the
// server's WriteTimeout, which a large export over a slow link outlives.
// Taken over, the body goes out in 64 KiB chunks with a deadline per write,
// and the connection closes after it. If write fails midway the stream is
// cut off without its last chunk, so the client sees an error rather than
// a complete-looking file. In-memory connections (app.Test) and HEAD
// requests get fasthttp's stream writer, which produces the same bytes (and
// none for HEAD).
func (s *server) stream(c *fiber.Ctx, contentType, filename string, write func(ctx context.Context, w *bufio.Writer) error) error {
	if c.Method() == fiber.MethodHead {
		// Headers only: nothing is read from the database.
		write = func(context.Context, *bufio.Writer) error { return nil }
	} else {
		leave, err := s.exports.enter(c, currentUser(c).ID)
		if err != nil {
			return err
		}
		inner := write
		write = func(ctx context.Context, w *bufio.Writer) error {
			defer leave()
			return inner(ctx, w)
		}
	}
	c.Set(fiber.HeaderContentType, contentType)
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"`, filename))
	c.Set(fiber.HeaderCacheControl, "no-store")
	logger := s.Logger
	if !onNetwork(c.Context().Conn()) || c.Method() != fiber.MethodGet {
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
			ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
			defer cancel()
			if err := write(ctx, w); err != nil {
				logger.Error("export failed midway", "file", filename, "err", err)
				return
			}
			_ = w.Flush()
		})
		return nil
	}
	var h fasthttp.ResponseHeader
	c.Response().Header.CopyTo(&h)
	h.SetContentLength(-1) // chunked
	h.SetConnectionClose()
	head := h.Header() // a copy: h is ours
	c.Context().HijackSetNoResponse(true)
	c.Context().Hijack(func(conn net.Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		defer cancel()
		out := bufio.NewWriterSize(deadlineWriter{conn, s.exportStall}, exportChunk)
		chunks := httputil.NewChunkedWriter(out)
		body := bufio.NewWriterSize(chunks, exportChunk)
		_, err := out.Write(head)
		if err == nil {
			err = write(ctx, body)
		}
		if err == nil {
			err = body.Flush()
		}
		if err == nil {
			err = chunks.Close() // the last chunk: "0\r\n"
		}
		if err == nil {
			_, err = out.WriteString("\r\n") // no trailers
		}
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			logger.Error("export failed midway", "file", filename, "err", err)
		}
	})
	return nil
}

// onNetwork tells a real connection from app.Test's in-memory one.
func onNetwork(conn net.Conn) bool {
	switch conn.(type) {
	case *net.TCPConn, *net.UnixConn, *tls.Conn:
		return true
	}
	return false
}

// exportChunk is the size of an export's chunks on the wire.
const exportChunk = 64 << 10

// deadlineWriter gives every write to the connection its own deadline: a
// client that takes nothing for that long is cut off, and the database
// connection its export held goes back to the pool.
type deadlineWriter struct {
	conn    net.Conn
	timeout time.Duration
}

func (w deadlineWriter) Write(p []byte) (int, error) {
	if err := w.conn.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
		return 0, err
	}
	return w.conn.Write(p)
}

// rawParam reads ?raw: true leaves CSV text that a spreadsheet would read
// as a formula as it is (by default it is neutralised; see
// export.FormulaSafe), for tools that read the file as data.
func rawParam(c *fiber.Ctx) (bool, error) {
	switch v := c.Query("raw"); v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	default:
		return false, catalogueErr(fiber.StatusBadRequest, "exports.bad_raw", "Value", strconv.Quote(strings.ToValidUTF8(v, "?")))
	}
}

// exportRun streams one run's results: ?format=csv (default) or jsonl
// (the OpenAI batch output format).
func (s *server) exportRun(c *fiber.Ctx) error {
	_, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	ids := []int64{run.ID}
	raw, err := rawParam(c)
	if err != nil {
		return err
	}
	if err := s.setDigests(c, ids, true); err != nil {
		return err
	}
	switch format := c.Query("format", "csv"); format {
	case "csv":
		return s.stream(c, "text/csv; charset=utf-8", fmt.Sprintf("run-%d-results.csv", run.ID), func(ctx context.Context, w *bufio.Writer) error {
			return s.Store.CopyResultsCSV(ctx, w, ids, false, raw)
		})
	case "jsonl":
		return s.stream(c, "application/jsonl; charset=utf-8", fmt.Sprintf("run-%d-results.jsonl", run.ID), func(ctx context.Context, w *bufio.Writer) error {
			return s.Store.StreamResults(ctx, ids, func(r store.ResultRow) error { return export.WriteBatchLine(w, run.ModelName, run.Engine, r) })
		})
	case "categories":
		// The quality per category of the dataset's items, as a CSV of its
		// own so the results CSV keeps its columns.
		cats, err := s.Store.RunCategoryScores(c.UserContext(), run.ID)
		if err != nil {
			return err
		}
		figs := score.ByCategory(run.ID, cats)
		return s.stream(c, "text/csv; charset=utf-8", fmt.Sprintf("run-%d-categories.csv", run.ID), func(_ context.Context, w *bufio.Writer) error {
			return export.WriteCategories(w, run.ID, figs, raw)
		})
	default:
		return catalogueErr(fiber.StatusBadRequest, "exports.bad_format_run", "Format", strconv.Quote(format))
	}
}

// exportBenchmark streams a benchmark's results as one CSV with the run
// columns first, or (summary) one row of figures per run.
func (s *server) exportBenchmark(summary bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		b, err := s.benchmarkParam(c)
		if err != nil {
			return err
		}
		if format := c.Query("format", "csv"); format != "csv" {
			return catalogueErr(fiber.StatusBadRequest, "exports.bad_format", "Format", strconv.Quote(format))
		}
		raw, err := rawParam(c)
		if err != nil {
			return err
		}
		ids := make([]int64, len(b.Runs))
		for i, r := range b.Runs {
			ids[i] = r.ID
		}
		if err := s.setDigests(c, ids, false); err != nil {
			return err
		}
		if summary {
			crs, err := s.Store.RunFiguresByID(c.UserContext(), viewer(c), ids)
			if err != nil {
				return err
			}
			if err := runFiguresWithRuntimeStates(c.UserContext(), s.Store, crs); err != nil {
				return err
			}
			return s.stream(c, "text/csv; charset=utf-8", fmt.Sprintf("benchmark-%d-summary.csv", b.ID), func(_ context.Context, w *bufio.Writer) error {
				return export.WriteSummary(w, crs, s.GridCO2, raw)
			})
		}
		return s.stream(c, "text/csv; charset=utf-8", fmt.Sprintf("benchmark-%d-results.csv", b.ID), func(ctx context.Context, w *bufio.Writer) error {
			return s.Store.CopyResultsCSV(ctx, w, ids, true, raw)
		})
	}
}
