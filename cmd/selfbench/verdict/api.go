package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"time"
)

// client speaks the JSON API with a bearer token, as a user's script does.
type client struct {
	base, token string
}

// do sends body (JSON unless contentType says otherwise) and decodes a 2xx
// answer into out (when not nil); it returns the status.
func (c *client) do(ctx context.Context, method, path, contentType string, body io.Reader, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		return res.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, res.Status, bytes.TrimSpace(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return res.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return res.StatusCode, nil
}

func (c *client) get(ctx context.Context, path string, out any) error {
	_, err := c.do(ctx, http.MethodGet, path, "", nil, out)
	return err
}

func (c *client) send(ctx context.Context, method, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, method, path, "application/json", bytes.NewReader(b), out)
	return err
}

// upload posts a JSONL dataset as the upload form does.
func (c *client) upload(ctx context.Context, name string, jsonl []byte) (int64, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.WriteField("name", name); err != nil {
		return 0, err
	}
	f, err := w.CreateFormFile("file", name+".jsonl")
	if err != nil {
		return 0, err
	}
	if _, err := f.Write(jsonl); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	var ds struct {
		ID int64 `json:"dataset_id"`
	}
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/datasets", w.FormDataContentType(), &b, &ds); err != nil {
		return 0, err
	}
	return ds.ID, nil
}

// The API's answers, as far as the bench reads them.
type (
	apiClaimRun struct {
		RunID int64   `json:"run_id"`
		Value float64 `json:"value"`
	}
	apiClaim struct {
		Metric      string       `json:"metric"`
		Leader      *apiClaimRun `json:"leader"`
		RunnerUp    *apiClaimRun `json:"runner_up"`
		Test        string       `json:"test"`
		P           *float64     `json:"p"`
		Significant bool         `json:"significant"`
		Comparable  bool         `json:"comparable"`
		Reason      string       `json:"reason"`
	}
	apiVerdict struct {
		Pending bool       `json:"pending"`
		Reason  string     `json:"reason"`
		Claims  []apiClaim `json:"claims"`
	}
	apiRegression struct {
		Metric       string `json:"metric"`
		AgainstRunID int64  `json:"against_run_id"`
	}
	apiRun struct {
		ID          int64           `json:"run_id"`
		Model       string          `json:"model"`
		Hardware    string          `json:"hardware"`
		State       string          `json:"state"`
		Scorer      string          `json:"scorer"`
		Quality     *float64        `json:"quality"`
		Throughput  *float64        `json:"throughput"`
		Regression  *apiRegression  `json:"regression"`
		Regressions []apiRegression `json:"regressions"`
	}
	apiBenchmark struct {
		ID         int64      `json:"benchmark_id"`
		FinishedAt *time.Time `json:"finished_at"`
		Runs       []apiRun   `json:"runs"`
	}
)

// claim is the verdict's claim on metric, or nil.
func (v apiVerdict) claim(metric string) *apiClaim {
	for i := range v.Claims {
		if v.Claims[i].Metric == metric {
			return &v.Claims[i]
		}
	}
	return nil
}

// flags are the run's regression flags (an older server gives only the
// most telling one).
func (r apiRun) flags() []apiRegression {
	if len(r.Regressions) > 0 {
		return r.Regressions
	}
	if r.Regression != nil {
		return []apiRegression{*r.Regression}
	}
	return nil
}
