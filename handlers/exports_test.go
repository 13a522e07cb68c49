package handlers_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/export"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// raw fetches a path with a token and returns status, content type and body.
func (e *env) raw(path, token string) (int, string, string) {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// A run's results download as CSV and as OpenAI batch output JSONL; a
// benchmark's as one CSV with the run columns, and a summary CSV.
func TestExports(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(u)
	ds := e.upload(tok, "q.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"x","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, ds.body["dataset_id"])
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	b := fmt.Sprint(r.body["benchmark_id"])
	runID := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	var jobID int64
	_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&jobID)
	claim, err := e.store.ClaimRun(ctx, runID, agent.ID, jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	evil := `<script>alert(1)</script>, "quoted"` + "\nline two"
	rs := []store.ResultRecord{
		{Result: jobs.Result{Idx: 0, CustomID: "q1", Status: jobs.StatusOK, Output: evil, FinishReason: "stop", PromptTokens: 5, CompletionTokens: 7,
			ContentEvents: 7, TTFT: 12 * time.Millisecond, E2E: 80 * time.Millisecond, HTTPStatus: 200, RequestID: "cmpl-1"}, SentAt: time.Now()},
		{Result: jobs.Result{Idx: 1, CustomID: "q2", Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP5xx, Error: "HTTP 500: boom", HTTPStatus: 500}, SentAt: time.Now()},
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	sum, _ := summary.Run(ctx, e.store, runID, jobs.SLO{}, time.Second)
	sumJSON, _ := json.Marshal(sum)
	if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: time.Second, Summary: sumJSON}); err != nil {
		t.Fatal(err)
	}

	status, ct, body := e.raw(fmt.Sprintf("/api/v1/runs/%d/results?format=csv", runID), tok)
	if status != 200 || !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("csv: %d %s", status, ct)
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) != 3 || strings.Join(recs[0], ",") != strings.Join(export.ResultColumns, ",") {
		t.Fatalf("csv: %v %q", err, recs)
	}
	if recs[1][0] != "q1" || recs[1][3] != evil || recs[1][6] != "7" || recs[1][8] != "12" || recs[2][2] != "error" || recs[2][13] != jobs.ErrHTTP5xx {
		t.Fatalf("csv rows: %q", recs[1:])
	}

	status, _, body = e.raw(fmt.Sprintf("/api/v1/runs/%d/results?format=jsonl", runID), tok)
	sc := bufio.NewScanner(strings.NewReader(body))
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("jsonl line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if status != 200 || len(lines) != 2 {
		t.Fatalf("jsonl: %d %d lines", status, len(lines))
	}
	resp := lines[0]["response"].(map[string]any)
	msg := resp["body"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if lines[0]["custom_id"] != "q1" || lines[0]["id"] == "" || resp["status_code"] != 200.0 || resp["request_id"] != "cmpl-1" ||
		msg["content"] != evil || lines[0]["error"] != nil {
		t.Fatalf("jsonl ok line: %v", lines[0])
	}
	if lines[1]["error"].(map[string]any)["code"] != jobs.ErrHTTP5xx || lines[1]["response"].(map[string]any)["status_code"] != 500.0 {
		t.Fatalf("jsonl error line: %v", lines[1])
	}

	status, _, body = e.raw("/api/v1/benchmarks/"+b+"/export?format=csv", tok)
	recs, _ = csv.NewReader(strings.NewReader(body)).ReadAll()
	if status != 200 || len(recs) != 3 || recs[0][0] != "run_id" || recs[1][0] != fmt.Sprint(runID) || recs[1][1] != "m/small" || recs[1][5] != "q1" ||
		recs[0][len(recs[0])-1] != export.EngineColumn || recs[1][len(recs[1])-1] != "" {
		t.Fatalf("benchmark csv: %d %q", status, recs)
	}
	status, _, body = e.raw("/api/v1/benchmarks/"+b+"/summary?format=csv", tok)
	recs, _ = csv.NewReader(strings.NewReader(body)).ReadAll()
	if status != 200 || len(recs) != 2 || strings.Join(recs[0], ",") != strings.Join(export.SummaryColumns, ",") {
		t.Fatalf("summary csv: %d %q", status, recs)
	}
	summary := map[string]string{}
	for i, name := range recs[0] {
		summary[name] = recs[1][i]
	}
	if summary["requests"] != "2" || summary["errors"] != "1" || summary["output_tokens"] != "7" || summary["state"] != "completed" {
		t.Fatalf("summary csv figures: %q", summary)
	}
	// Not measured is empty, never 0: no GPU readings, no price, no
	// inter-token gaps, no launched runtime.
	for _, name := range []string{"energy_j", "joules_per_token", "peak_gpu_mem_bytes", "cost_per_1m_tokens", "energy_kwh", "co2e_g",
		"itl_p50_ms", "itl_p99_ms", "itl_max_ms", "load_time_ms", "runtime_log_tail"} {
		if summary[name] != "" {
			t.Errorf("summary csv %s = %q, want empty (not measured)", name, summary[name])
		}
	}

	// The files as a whole, against their golden copies.
	for name, path := range map[string]string{
		"run.csv":         fmt.Sprintf("/api/v1/runs/%d/results?format=csv", runID),
		"run.jsonl":       fmt.Sprintf("/api/v1/runs/%d/results?format=jsonl", runID),
		"benchmark.csv":   "/api/v1/benchmarks/" + b + "/export?format=csv",
		"summary.csv":     "/api/v1/benchmarks/" + b + "/summary?format=csv",
		"summary_raw.csv": "/api/v1/benchmarks/" + b + "/summary?format=csv&raw=1",
	} {
		_, _, body := e.raw(path, tok)
		golden(t, "export_"+name, body)
	}

	// Another user cannot read them; a bad format is refused.
	other := e.token(e.createUser("eve@example.com", "correct horse", store.RoleUser))
	if status, _, _ := e.raw(fmt.Sprintf("/api/v1/runs/%d/results?format=csv", runID), other); status != 404 {
		t.Fatalf("another user's run: %d", status)
	}
	if status, _, _ := e.raw(fmt.Sprintf("/api/v1/runs/%d/results?format=xml", runID), tok); status != 400 {
		t.Fatalf("format xml: %d", status)
	}

	// The page links the downloads.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/benchmarks/" + b)
	if page.doc.Find(fmt.Sprintf(`[data-testid="export-csv-%d"]`, runID)).Length() != 1 || page.doc.Find(`[data-testid="export-summary"]`).Length() != 1 {
		t.Fatal("the benchmark page lacks its download links")
	}
	if snap := page.text(`[data-testid="config-snapshot"] pre`); !strings.Contains(snap, `"max_tokens": 8`) || !strings.Contains(snap, `"profile": "sequential"`) {
		t.Fatalf("config snapshot: %q", snap)
	}
}

// Over a real connection an export takes the connection over and sends
// 64 KiB chunks: the bytes, headers and ending are those of the in-memory
// path, for a run's CSV and JSONL and a benchmark's CSV, and the
// connection is closed after the file.
func TestExportsOverTheNetwork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	// Enough rows for many chunks of either size.
	b, runID := runWithResults(t, e, tok, 3000, func(i int) string { return strings.Repeat(fmt.Sprintf("answer %d, ", i), 8) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.app.Listener(ln) }()
	t.Cleanup(func() { _ = ln.Close() })
	base := "http://" + ln.Addr().String()
	for _, path := range []string{
		fmt.Sprintf("/api/v1/runs/%d/results?format=csv", runID),
		fmt.Sprintf("/api/v1/runs/%d/results?format=jsonl", runID),
		"/api/v1/benchmarks/" + b + "/export?format=csv",
	} {
		status, ct, inMemory := e.raw(path, tok)
		if status != 200 || len(inMemory) < 200_000 {
			t.Fatalf("%s in memory: %d, %d bytes", path, status, len(inMemory))
		}
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v (a cut-short stream?)", path, err)
		}
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != ct || !res.Close ||
			!strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment; filename=") ||
			res.Header.Get("X-Content-Type-Options") != "nosniff" || len(res.TransferEncoding) != 1 || res.TransferEncoding[0] != "chunked" {
			t.Fatalf("%s over the network: %d %v close=%v te=%v", path, res.StatusCode, res.Header, res.Close, res.TransferEncoding)
		}
		if string(got) != inMemory {
			t.Fatalf("%s: %d bytes over the network, %d in memory, not the same", path, len(got), len(inMemory))
		}
	}
	// HEAD answers with the headers and no body.
	head, _ := http.NewRequest(http.MethodHead, fmt.Sprintf("%s/api/v1/runs/%d/results?format=csv", base, runID), nil)
	head.Header.Set("Authorization", "Bearer "+tok)
	if res, err := http.DefaultClient.Do(head); err != nil || res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || res.Close {
		t.Fatalf("HEAD of an export: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	// Another user's run is still refused before anything is taken over.
	other := e.token(e.createUser("eve@example.com", "correct horse", store.RoleUser))
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/runs/%d/results?format=csv", base, runID), nil)
	req.Header.Set("Authorization", "Bearer "+other)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Fatalf("another user's export over the network: %d", res.StatusCode)
	}
}
