package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// apiGet calls the API with the token and returns the response for the
// caller to read (and close); a non-2xx answer becomes an error with the
// server's message.
func apiGet(ctx context.Context, path string) (*http.Response, error) {
	base, token, err := apiSettings()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach %s: %w", base, err)
	}
	if res.StatusCode/100 != 2 {
		defer res.Body.Close()
		var e struct{ Error string }
		_ = json.NewDecoder(io.LimitReader(res.Body, 4096)).Decode(&e)
		if e.Error == "" {
			e.Error = res.Status
		}
		return nil, fmt.Errorf("%s: %s", path, e.Error)
	}
	return res, nil
}

// cmdResults is `ruckus results export RUN --format csv|jsonl` and
// `ruckus results import FILE --dataset ID --model M`.
func cmdResults(ctx context.Context, args []string, out io.Writer) error {
	const use = "ruckus results export RUN [--format csv|jsonl] [--output FILE]"
	if len(args) > 0 && args[0] == "import" {
		return cmdResultsImport(ctx, args[1:], out)
	}
	if len(args) == 0 || args[0] != "export" {
		return fmt.Errorf("%w: %s | ruckus results import FILE --dataset ID --model M", errUsage, use)
	}
	fs := newFlags("results export", use, out)
	format := fs.String("format", "csv", "csv, or jsonl (OpenAI batch output format)")
	output := fs.String("output", "", "file to write (default: standard output)")
	arg, err := parseFileArg(fs, args[1:])
	if err != nil {
		return err
	}
	run, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || run <= 0 {
		return fmt.Errorf("%w: RUN must be a run id (got %q)", errUsage, arg)
	}
	if *format != "csv" && *format != "jsonl" {
		return fmt.Errorf("%w: --format must be csv or jsonl", errUsage)
	}
	res, err := apiGet(ctx, fmt.Sprintf("/api/v1/runs/%d/results?format=%s", run, *format))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	w := out
	if *output != "" {
		f, err := os.Create(*output)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	_, err = io.Copy(w, res.Body)
	return err
}

// watchedRun is what bench watch shows of a run.
type watchedRun struct {
	RunID      int64   `json:"run_id"`
	Model      string  `json:"model"`
	Runtime    string  `json:"runtime"`
	State      string  `json:"state"`
	Waiting    bool    `json:"waiting_for_agent"`
	Progress   int     `json:"progress"` // per cent
	Completed  int     `json:"completed"`
	Total      int     `json:"total"`
	Errors     int     `json:"errors"`
	Throughput float64 `json:"throughput"`
	ETASeconds *int64  `json:"eta_seconds"`
	Error      string  `json:"error"`
}

// progressLine is one run as a line of plain text, for output that is not
// a terminal (a log, a pipe): the bar drawn with # and . and the figures.
func progressLine(r watchedRun) string {
	const width = 30
	filled := (r.Progress*width + 50) / 100
	filled = min(max(filled, 0), width)
	return fmt.Sprintf("%s[%s%s] %3d%% %s", runLabel(r), strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		r.Progress, runFigures(r))
}

// runLabel names a run at the start of its line.
func runLabel(r watchedRun) string {
	return fmt.Sprintf("run %-5d %-28.28s ", r.RunID, r.Model+" "+r.Runtime)
}

// runFigures is what follows a run's bar: counts, speed, errors, ETA and
// state.
func runFigures(r watchedRun) string {
	eta := ""
	if r.ETASeconds != nil && r.State == "running" {
		eta = " ETA " + (time.Duration(*r.ETASeconds) * time.Second).String()
	}
	state := r.State
	if r.Waiting && r.State == "queued" {
		state = "queued, waiting for an agent"
	}
	line := fmt.Sprintf("%d/%d %.1f tok/s errors %d%s  %s", r.Completed, r.Total, r.Throughput, r.Errors, eta, state)
	if r.Error != "" {
		line += ": " + r.Error
	}
	return line
}

// isTerminal reports whether w is a terminal, where bars are redrawn in
// place; elsewhere output is plain lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runBars draws a benchmark's runs on a terminal, one mpb bar per run,
// redrawn in place.
type runBars struct {
	p    *mpb.Progress
	bars map[int64]*runBar
}

type runBar struct {
	bar *mpb.Bar
	// figures follows the bar; the drawing goroutine reads it.
	figures atomic.Pointer[string]
}

func newRunBars(ctx context.Context, out io.Writer) *runBars {
	return &runBars{
		p:    mpb.NewWithContext(ctx, mpb.WithOutput(out), mpb.WithWidth(160), mpb.WithRefreshRate(200*time.Millisecond), mpb.WithAutoRefresh()),
		bars: map[int64]*runBar{},
	}
}

// show updates a run's bar, adding it the first time; a run that has
// ended ends its bar: full when it succeeded, where it stopped otherwise.
func (b *runBars) show(r watchedRun) {
	rb := b.bars[r.RunID]
	figures := runFigures(r)
	if rb == nil {
		rb = &runBar{}
		rb.figures.Store(&figures)
		rb.bar = b.p.New(int64(max(r.Total, 1)), mpb.BarStyle().Lbound("[").Filler("#").Tip("#").Padding(".").Rbound("]"), mpb.BarWidth(32),
			mpb.PrependDecorators(decor.Name(runLabel(r))),
			mpb.AppendDecorators(decor.Percentage(decor.WC{W: 5}), decor.Any(func(decor.Statistics) string { return " " + *rb.figures.Load() })))
		b.bars[r.RunID] = rb
	}
	rb.figures.Store(&figures)
	rb.bar.SetCurrent(int64(r.Completed))
	switch r.State {
	case "queued", "running":
	case "completed":
		rb.bar.SetTotal(-1, true)
	default: // failed or cancelled: the bar stays where the run stopped
		rb.bar.Abort(false)
	}
}

// cmdBenchWatch follows a benchmark until no run is queued or running.
func cmdBenchWatch(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("bench watch", "ruckus bench watch ID [--interval 2s]", out)
	interval := fs.Duration("interval", 2*time.Second, "how often to ask")
	arg, err := parseFileArg(fs, args)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return fmt.Errorf("%w: ID must be a benchmark id (got %q)", errUsage, arg)
	}
	return watchBenchmark(ctx, id, *interval, out, isTerminal(out))
}

// watchBenchmark asks for the benchmark every interval and shows its runs:
// as bars redrawn in place on a terminal (tty), else as a block of plain
// lines per answer.
func watchBenchmark(ctx context.Context, id int64, interval time.Duration, out io.Writer, tty bool) error {
	var (
		bars  *runBars
		ended bool // every run ended, so every bar is complete
	)
	if tty {
		barsCtx, cancel := context.WithCancel(ctx)
		bars = newRunBars(barsCtx, out)
		// The bars are drawn to the end (or dropped when watching stops
		// early) before the caller writes anything else.
		defer func() {
			if !ended {
				cancel()
			}
			bars.p.Wait()
			cancel()
		}()
	}
	for {
		res, err := apiGet(ctx, fmt.Sprintf("/api/v1/benchmarks/%d", id))
		if err != nil {
			return err
		}
		var b struct {
			Name string       `json:"name"`
			Runs []watchedRun `json:"runs"`
		}
		err = json.NewDecoder(res.Body).Decode(&b)
		res.Body.Close()
		if err != nil {
			return fmt.Errorf("benchmark %d: %w", id, err)
		}
		active, failed := false, 0
		for _, r := range b.Runs {
			if tty {
				bars.show(r)
			} else {
				fmt.Fprintln(out, progressLine(r))
			}
			active = active || r.State == "queued" || r.State == "running"
			if r.State == "failed" {
				failed++
			}
		}
		if !tty {
			fmt.Fprintln(out)
		}
		if !active {
			ended = true
			if failed > 0 {
				return fmt.Errorf("%d run(s) failed", failed)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("stopped watching; the benchmark goes on")
		case <-time.After(interval):
		}
	}
}

// cmdResultsImport uploads results made elsewhere (OpenAI batch output or
// {"custom_id","output"} JSONL) as a run on a dataset.
func cmdResultsImport(ctx context.Context, args []string, out io.Writer) error {
	const use = "ruckus results import FILE --dataset ID --model M [--name N] [--scorer S]"
	fs := newFlags("results import", use, out)
	datasetID := fs.Int64("dataset", 0, "the dataset the results answer (its id)")
	model := fs.String("model", "", "the registry model that made them")
	name := fs.String("name", "", "a name for the imported run's benchmark")
	scorer := fs.String("scorer", "", "score with this scorer (default: the dataset's)")
	file, err := parseFileArg(fs, args)
	if err != nil {
		return err
	}
	if file == "" || *datasetID <= 0 || *model == "" {
		return fmt.Errorf("%w: %s", errUsage, use)
	}
	var fields [][2]string
	for _, kv := range [][2]string{{"model", *model}, {"name", *name}, {"scorer", *scorer}} {
		if kv[1] != "" {
			fields = append(fields, kv)
		}
	}
	res, err := postFile(ctx, fmt.Sprintf("/api/v1/datasets/%d/imports", *datasetID), fields, file, barsTo(out))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var body struct {
		RunID        int64    `json:"run_id"`
		Matched      int      `json:"matched"`
		Unmatched    int      `json:"unmatched"`
		Missing      int      `json:"missing"`
		UnmatchedIDs []string `json:"unmatched_ids"`
		Error        string   `json:"error"`
		Errors       []struct {
			Line    int
			Field   string
			Message string
		} `json:"errors"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return fmt.Errorf("the server answered %s without JSON", res.Status)
	}
	if res.StatusCode != http.StatusCreated {
		var msgs []string
		for _, e := range body.Errors {
			if e.Line > 0 {
				msgs = append(msgs, fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Message))
			} else {
				msgs = append(msgs, e.Field+": "+e.Message)
			}
		}
		if body.Error != "" {
			msgs = append(msgs, body.Error)
		}
		return fmt.Errorf("import refused (%s): %s", res.Status, strings.Join(msgs, "; "))
	}
	fmt.Fprintf(out, "run %d imported: %d matched, %d unmatched, %d items missing\n", body.RunID, body.Matched, body.Unmatched, body.Missing)
	if len(body.UnmatchedIDs) > 0 {
		fmt.Fprintf(out, "unmatched custom_ids: %s\n", strings.Join(body.UnmatchedIDs, ", "))
	}
	return nil
}
