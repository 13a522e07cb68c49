package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// cmdDataset is `ruckus dataset upload FILE`: an API client, so it works
// against any server (RUCKUS_URL) with a token (RUCKUS_TOKEN).
func cmdDataset(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "upload" {
		return fmt.Errorf("%w: ruckus dataset upload FILE [--name N] [--shared] [--allow-duplicate]", errUsage)
	}
	fs := newFlags("dataset upload", "ruckus dataset upload FILE [--name N] [--shared] [--allow-duplicate]", out)
	name := fs.String("name", "", "dataset name (default: the file name)")
	shared := fs.Bool("shared", false, "share with all users (default: private)")
	dup := fs.Bool("allow-duplicate", false, "store a copy even when an identical dataset exists")
	file, err := parseFileArg(fs, args[1:])
	if err != nil {
		return err
	}
	fields := [][2]string{}
	if *name != "" {
		fields = append(fields, [2]string{"name", *name})
	}
	vis := "private"
	if *shared {
		vis = "shared"
	}
	fields = append(fields, [2]string{"visibility", vis})
	if *dup {
		fields = append(fields, [2]string{"allow_duplicate", "true"})
	}
	res, err := postFile(ctx, "/api/v1/datasets", fields, file, barsTo(out))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var body struct {
		ID       int64  `json:"dataset_id"`
		Name     string `json:"name"`
		Format   string `json:"format"`
		Count    int    `json:"count"`
		Bytes    int64  `json:"bytes"`
		Error    string `json:"error"`
		Existing []struct {
			ID   int64  `json:"dataset_id"`
			Name string `json:"name"`
		} `json:"existing"`
		Errors []struct {
			Line    int    `json:"line"`
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"errors"`
		ErrorCount int `json:"error_count"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return fmt.Errorf("the server answered %s without JSON", res.Status)
	}
	switch res.StatusCode {
	case http.StatusCreated:
		fmt.Fprintf(out, "dataset %d %q: %d items, format %s, %d bytes\n", body.ID, body.Name, body.Count, body.Format, body.Bytes)
		return nil
	case http.StatusConflict:
		var ids []string
		for _, e := range body.Existing {
			ids = append(ids, fmt.Sprintf("%d (%s)", e.ID, e.Name))
		}
		return fmt.Errorf("an identical dataset exists: %s; pass --allow-duplicate to store a copy", strings.Join(ids, ", "))
	case http.StatusUnprocessableEntity:
		var b strings.Builder
		fmt.Fprintf(&b, "the file has %d problem(s); nothing was stored:", body.ErrorCount)
		for _, e := range body.Errors {
			fmt.Fprintf(&b, "\n  line %d: %s: %s", e.Line, e.Field, e.Message)
		}
		return fmt.Errorf("%s", b.String())
	}
	return fmt.Errorf("the server answered %s: %s", res.Status, body.Error)
}

// apiSettings reads the server URL and token the API commands use.
func apiSettings() (base, token string, err error) {
	base = strings.TrimRight(envOr("RUCKUS_URL", "http://localhost:8080"), "/")
	token = os.Getenv("RUCKUS_TOKEN")
	if token == "" {
		return "", "", fmt.Errorf("RUCKUS_TOKEN is not set: create a token under Settings in the web UI, or with `ruckus token create --email E`")
	}
	return base, token, nil
}

// barsTo is out when it is a terminal, for progress bars; nil elsewhere,
// where only the outcome is printed.
func barsTo(out io.Writer) io.Writer {
	if isTerminal(out) {
		return out
	}
	return nil
}

// uploadBar draws a file's upload as a bar of bytes sent with the average
// speed. It returns the file wrapped to count what is read, and finish,
// which ends the bar (where it stopped, when the server answered before
// reading all of it) and waits until it is drawn.
func uploadBar(ctx context.Context, out io.Writer, name string, size int64, f io.Reader) (io.Reader, func()) {
	p := mpb.NewWithContext(ctx, mpb.WithOutput(out), mpb.WithWidth(160), mpb.WithRefreshRate(200*time.Millisecond), mpb.WithAutoRefresh())
	bar := p.New(max(size, 1), mpb.BarStyle().Lbound("[").Filler("#").Tip("#").Padding(".").Rbound("]"), mpb.BarWidth(32),
		mpb.PrependDecorators(decor.Name("upload "+name)),
		mpb.AppendDecorators(decor.Percentage(decor.WC{W: 5}), decor.Name(" "), decor.CountersKibiByte("% .1f / % .1f"),
			decor.Name(" "), decor.AverageSpeed(decor.SizeB1024(0), "% .1f")))
	r, err := bar.ProxyReader(f)
	if err != nil { // the context ended already
		return f, p.Wait
	}
	return r, func() {
		bar.Abort(false)
		p.Wait()
	}
}

// postFile sends file to the API path as multipart/form-data, after the
// fields (in order, so the server can check them before the file), and
// streams it: the body is written while it is sent. With bars set (a
// terminal), a progress bar follows the upload there.
func postFile(ctx context.Context, path string, fields [][2]string, file string, bars io.Writer) (*http.Response, error) {
	base, token, err := apiSettings()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	var (
		body   io.Reader = f
		finish           = func() {}
	)
	if fi, err := f.Stat(); err == nil && bars != nil {
		body, finish = uploadBar(ctx, bars, filepath.Base(file), fi.Size(), f)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		defer f.Close()
		err := func() error {
			for _, kv := range fields {
				if err := mw.WriteField(kv[0], kv[1]); err != nil {
					return err
				}
			}
			part, err := mw.CreateFormFile("file", filepath.Base(file))
			if err != nil {
				return err
			}
			if _, err := io.Copy(part, body); err != nil {
				return err
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, pr)
	if err != nil {
		pr.CloseWithError(err)
		finish()
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	finish()
	if err != nil {
		return nil, fmt.Errorf("send %s to %s: %w", filepath.Base(file), base, err)
	}
	return res, nil
}
