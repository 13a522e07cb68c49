package handlers_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// formEnv is a signed-in user, a dataset, a small and a large model, a CPU
// profile and a 24 GB GPU profile.
func formEnv(t *testing.T) (*env, *client, string) {
	t.Helper()
	e := newEnv(t)
	ctx := context.Background()
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	ds := e.upload(e.token(u), "q.jsonl", []byte(simpleJSONL), nil)
	for _, m := range []store.ModelFields{
		{Name: "acme/small-1b", ParamsB: 1, Quantization: "bf16", ContextLength: 4096},
		{Name: "acme/large-70b", ParamsB: 70, Quantization: "bf16", ContextLength: 4096},
	} {
		if _, err := e.store.CreateModel(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []store.HardwareProfile{{Slug: "cpu-2c", CPUCores: 2}, {Slug: "l4-24gb-x1", GPUName: "NVIDIA L4", GPUCount: 1, GPUMemoryBytes: 24e9, CPUCores: 8}} {
		testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "agent-" + p.Slug, Runtimes: []string{"sim", "vllm"}, Profile: p})
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	return e, c, fmt.Sprint(ds.body["dataset_id"])
}

// The form starts with two rows; a model's option shows its size and
// memory need; a row redrawn for the 70B model on vllm greys out the 24 GB
// GPU, saying why, but not on the simulated runtime (which loads nothing).
func TestBenchmarkFormRowsShowSizesAndGreyOutHardwareTooSmall(t *testing.T) {
	t.Parallel()
	_, c, _ := formEnv(t)
	page := c.get("/benchmarks/new")
	if page.status != 200 || page.doc.Find(`[data-target-row]`).Length() != 2 {
		t.Fatalf("new form: %d with %d rows", page.status, page.doc.Find(`[data-target-row]`).Length())
	}
	if got := page.text(`select[name="target_0_model"] option[value="acme/large-70b"]`); got != "acme/large-70b (70B bf16, needs ~168.0 GB)" {
		t.Errorf("model option %q", got)
	}
	if add, _ := page.doc.Find(`[data-testid="add-target"]`).Attr("hx-get"); add != "/benchmarks/new/target?i=2&add=1" {
		t.Errorf("add button fetches %q", add)
	}
	for _, tc := range []struct {
		runtime  string
		disabled bool
	}{{"vllm", true}, {"sim", false}} {
		row := c.get("/benchmarks/new/target?i=1&target_1_model=acme/large-70b&target_1_runtime=" + tc.runtime)
		gpu := row.doc.Find(`select[name="target_1_hardware"] option[value="l4-24gb-x1"]`)
		_, disabled := gpu.Attr("disabled")
		if row.status != 200 || disabled != tc.disabled || row.doc.Find(`[data-target-row]`).Length() != 1 {
			t.Errorf("%s: %d, L4 disabled %v: %q", tc.runtime, row.status, disabled, gpu.Text())
		}
		if tc.disabled && !strings.Contains(gpu.Text(), "too small: needs ~168.0 GB, has 24 GB") {
			t.Errorf("reason %q", gpu.Text())
		}
		if cpu, _ := row.doc.Find(`select[name="target_1_hardware"] option[value="cpu-2c"]`).Attr("disabled"); cpu != "" {
			t.Error("a CPU profile is greyed out")
		}
	}
	// A new row comes with the add button for the row after it.
	row := c.get("/benchmarks/new/target?i=2&add=1")
	if row.doc.Find(`select[name="target_2_model"]`).Length() != 1 {
		t.Errorf("added row: %s", row.body)
	}
	if oob, _ := row.doc.Find(`#add-target`).Attr("hx-swap-oob"); oob != "true" {
		t.Errorf("no out-of-band add button: %s", row.body)
	}
	for _, bad := range []string{"-1", "50", "x"} {
		if r := c.get("/benchmarks/new/target?i=" + bad); r.status != 422 {
			t.Errorf("i=%s: %d, want 422", bad, r.status)
		}
	}
}

// Without JavaScript: "add another" and "remove" post the form, which
// comes back with the rows changed and what was typed kept; a preset fills
// the load fields; nothing is planned meanwhile.
func TestBenchmarkFormWorksWithoutJavaScript(t *testing.T) {
	t.Parallel()
	e, c, ds := formEnv(t)
	c.get("/benchmarks/new")
	form := url.Values{"name": {"Rows"}, "dataset_id": {ds}, "max_tokens": {"64"}, "load_kind": {"sequential"},
		"target_0_model": {"acme/small-1b"}, "target_0_runtime": {"sim"}, "target_0_hardware": {"cpu-2c"},
		"target_1_model": {""}, "target_1_runtime": {""}, "target_1_hardware": {""}}
	form.Set("add_target", "1")
	res := c.post("/benchmarks/new", form)
	if res.status != 200 || res.doc.Find(`[data-target-row]`).Length() != 3 || res.doc.Find(`select[name="target_2_model"]`).Length() != 1 {
		t.Fatalf("add: %d, %d rows", res.status, res.doc.Find(`[data-target-row]`).Length())
	}
	if v, _ := res.doc.Find(`select[name="target_0_model"] option[selected]`).Attr("value"); v != "acme/small-1b" {
		t.Errorf("row 0 lost its model: %q", v)
	}
	form.Del("add_target")
	form.Set("remove_target", "0")
	res = c.post("/benchmarks/new", form)
	if res.status != 200 || res.doc.Find(`select[name="target_0_model"]`).Length() != 0 || res.doc.Find(`[data-target-row]`).Length() != 2 {
		t.Fatalf("remove: %d, %d rows", res.status, res.doc.Find(`[data-target-row]`).Length())
	}
	form.Del("remove_target")
	form.Set("preset", "sweep")
	res = c.post("/benchmarks/new", form)
	if v, _ := res.doc.Find(`select[name="load_kind"] option[selected]`).Attr("value"); v != "sweep" ||
		res.doc.Find(`input[name="concurrency"]`).AttrOr("value", "") != "32" || res.doc.Find(`[data-testid="preset-applied"]`).Length() != 1 {
		t.Errorf("preset: %s", res.text(`#load-fields`))
	}
	if e.countRows("benchmarks") != 0 {
		t.Fatal("editing the form created a benchmark")
	}
	// With htmx, the same preset is a fragment.
	frag := c.get("/benchmarks/new/load?preset=quick")
	if frag.status != 200 || frag.doc.Find(`input[name="max_requests"]`).AttrOr("value", "") != "20" {
		t.Errorf("quick preset fragment: %d %s", frag.status, frag.body)
	}
	if frag := c.get("/benchmarks/new/load?preset=nope"); frag.status != 422 || frag.doc.Find(`[data-testid="field-error"]`).Length() != 1 {
		t.Errorf("unknown preset: %d", frag.status)
	}
}

// Errors come back beside their fields (422), a target's at its own row
// even when empty rows come before it; a preview shows the request count
// and a duration range.
func TestBenchmarkFormErrorsBesideFieldsAndPreviewEstimate(t *testing.T) {
	t.Parallel()
	_, c, ds := formEnv(t)
	c.get("/benchmarks/new")
	form := url.Values{"name": {"Est"}, "dataset_id": {ds}, "max_tokens": {"100"}, "load_kind": {"concurrency"}, "concurrency": {"lots"},
		"target_0_model": {""}, "target_0_runtime": {""}, "target_0_hardware": {""},
		"target_3_model": {"acme/large-70b"}, "target_3_runtime": {"vllm"}, "target_3_hardware": {"l4-24gb-x1"},
		"action": {"preview"}}
	res := c.post("/benchmarks/new", form)
	if res.status != 422 || res.text(`#load-fields [data-path="load.concurrency"]`) != `"lots" is not a whole number` ||
		res.doc.Find(`input[name="concurrency"][aria-invalid="true"]`).Length() != 1 {
		t.Fatalf("bad number: %d %q", res.status, res.text(`[data-testid="field-error"]`))
	}
	form.Set("concurrency", "2")
	res = c.post("/benchmarks/new", form)
	if res.status != 422 || !strings.Contains(res.text(`#target-3 [data-path="targets[0]"]`), "needs about 168.0 GB") {
		t.Fatalf("too big: %d %q", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	form.Set("target_3_model", "acme/small-1b")
	form.Set("target_0_model", "acme/small-1b")
	form.Set("target_0_runtime", "sim")
	form.Set("target_0_hardware", "cpu-2c")
	res = c.post("/benchmarks/new", form)
	if res.status != 200 || res.doc.Find(`[data-testid="plan-run"]`).Length() != 2 {
		t.Fatalf("preview: %d %q", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	// 3 items × 2 runs; 2 waves at concurrency 2 of 50 ms + 25 × 5 ms to
	// 1 s + 100 × 40 ms.
	if got := res.text(`[data-testid="plan-requests"]`); got != "6 requests" {
		t.Errorf("requests %q", got)
	}
	if got := res.text(`[data-testid="plan-duration"]`); got != "350ms – 10s" {
		t.Errorf("duration %q", got)
	}
}

// The form's few-shot fields: k refused beside its field for a dataset
// that is not a standard suite; "0,2" on an ARC dataset previews every
// target once 0-shot and once 2-shot, launches both in one benchmark,
// and the benchmark page labels the 2-shot run.
func TestBenchmarkFormFewShot(t *testing.T) {
	t.Parallel()
	e, c, ds := formEnv(t)
	bo := e.createUser("bo@example.com", "correct horse", store.RoleUser)
	var arc strings.Builder
	for i := range 6 {
		fmt.Fprintf(&arc, `{"question":"Which is number %d?","choices":{"text":["a","b","c","d"],"label":["A","B","C","D"]},"answerKey":"B"}`+"\n", i)
	}
	up := e.upload(e.token(bo), "arc.jsonl", []byte(arc.String()), map[string]string{"visibility": "shared"})
	if up.status != 201 {
		t.Fatalf("upload: %d %v", up.status, up.body)
	}
	c.get("/benchmarks/new")
	form := url.Values{"name": {"Shots"}, "dataset_id": {ds}, "max_tokens": {"16"}, "load_kind": {"sequential"},
		"target_0_model": {"acme/small-1b"}, "target_0_runtime": {"sim"}, "target_0_hardware": {"cpu-2c"},
		"fewshot_k": {"2"}, "action": {"preview"}}
	res := c.post("/benchmarks/new", form)
	if res.status != 422 || !strings.Contains(res.text(`[data-path="fewshot.k"]`), "a prompt and a reference") {
		t.Fatalf("few-shot on a simple dataset: %d %q", res.status, res.text(`[data-testid="field-error"]`))
	}
	form.Set("fewshot_k", "two")
	if res = c.post("/benchmarks/new", form); res.status != 422 || res.text(`[data-path="fewshot.k"]`) != `"two" is not a whole number` {
		t.Fatalf("k not a number: %d %q", res.status, res.text(`[data-testid="field-error"]`))
	}
	form.Set("dataset_id", fmt.Sprint(up.body["dataset_id"]))
	form.Set("fewshot_k", "6")
	if res = c.post("/benchmarks/new", form); res.status != 422 || !strings.Contains(res.text(`[data-path="fewshot.k"]`), "at least 7 items") {
		t.Fatalf("more shots than the dataset gives: %d %q", res.status, res.text(`[data-testid="field-error"]`))
	}
	form.Set("fewshot_k", "0,2")
	res = c.post("/benchmarks/new", form)
	if res.status != 200 || res.doc.Find(`[data-testid="plan-run"]`).Length() != 2 {
		t.Fatalf("preview: %d %q", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	var labels []string
	res.doc.Find(`[data-testid="plan-fewshot"]`).Each(func(_ int, s *goquery.Selection) { labels = append(labels, s.Text()) })
	if strings.Join(labels, "|") != "0-shot|2-shot, seed 1234" {
		t.Errorf("preview prompts %q", labels)
	}
	form.Set("action", "launch")
	res = c.post("/benchmarks/new", form)
	if res.status != 303 && res.status != 302 {
		t.Fatalf("launch: %d %q", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	page := c.get(res.header.Get("Location"))
	if got := page.text(`[data-testid="run-fewshot"]`); got != "2-shot, seed 1234" {
		t.Errorf("benchmark page labels the few-shot run %q", got)
	}
}
