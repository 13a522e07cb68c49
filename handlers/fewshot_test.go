package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// gsm8kFile writes n GSM8K lines in the release's shape, each with its
// worked answer.
func gsm8kFile(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"question":"Tom has %d apples and buys 2. How many now?","answer":"%d + 2 = <<%d+2=%d>>%d\n#### %d"}`+"\n", i, i, i, i+2, i+2, i+2)
	}
	return b.String()
}

// A manifest asking 5-shot prompts of an uploaded GSM8K test split is
// created (201), and every request its run will send is lm-eval's gsm8k
// 5-shot prompt: five solved examples ("Question: …\nAnswer: <worked
// answer>"), never the item itself, then the item's question, with
// lm-eval's stops.
func TestAPIFewShotOnGSM8K(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	const items = 12
	up := e.upload(tok, "gsm8k-test.jsonl", []byte(gsm8kFile(items)), nil)
	if up.status != 201 || up.body["format"] != "gsm8k" {
		t.Fatalf("upload: %d %v", up.status, up.body)
	}
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"gsm8k 5-shot","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":64},"fewshot":{"k":5}}`, up.body["dataset_id"])
	res := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	run := res.body["runs"].([]any)[0].(map[string]any)
	if run["fewshot_k"] != float64(5) || run["fewshot_seed"] != float64(1234) {
		t.Fatalf("run %v", run)
	}
	runID := int64(run["run_id"].(float64))
	pending, err := e.store.PendingItems(ctx, runID, int64(up.body["dataset_id"].(float64)), items)
	if err != nil || len(pending) != items {
		t.Fatalf("pending: %d %v", len(pending), err)
	}
	for i, p := range pending {
		c, stop := oneMessage(t, i, p.Request)
		own := fmt.Sprintf("Question: Tom has %d apples and buys 2. How many now?\nAnswer:", i)
		if strings.Count(c, "Question: ") != 6 || strings.Count(c, "\n#### ") != 5 || !strings.HasSuffix(c, "\n\n"+own) || strings.Count(c, own) != 1 ||
			fmt.Sprint(stop) != "[Question: </s> <|im_end|>]" {
			t.Fatalf("item %d's request:\n%s\nstop %q", i, c, stop)
		}
	}
}

// An upload asking for the gsm8k-cot exemplars is stored with lm-eval's
// gsm8k_cot prompts (8 shots, as the dataset says); a benchmark cannot put
// more examples on top; a wrong set, shots beside it and a file without
// bare questions are refused naming the field.
func TestAPIUploadWithGSM8KCoTExemplars(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	for _, c := range []struct {
		fields map[string]string
		file   string
		field  string
	}{
		{map[string]string{"exemplars": "gsm8k-cod"}, gsm8kFile(3), "exemplars"},
		{map[string]string{"exemplars": "gsm8k-cot", "shots": "2"}, gsm8kFile(3), "exemplars"},
		{map[string]string{"exemplars": "gsm8k-cot"}, `{"prompt":"no reference"}` + "\n", ""},
	} {
		if r := e.upload(tok, "x.jsonl", []byte(c.file), c.fields); r.status != 422 || !strings.Contains(fmt.Sprint(r.body["errors"]), "field:"+c.field+" ") {
			t.Errorf("%v: %d %v", c.fields, r.status, r.body)
		}
	}
	up := e.upload(tok, "gsm8k-cot.jsonl", []byte(gsm8kFile(4)), map[string]string{"exemplars": "gsm8k-cot"})
	if up.status != 201 || up.body["format"] != "gsm8k" || up.body["shots"] != float64(8) {
		t.Fatalf("upload: %d %v", up.status, up.body)
	}
	items := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%v/items", up.body["dataset_id"]), tok, nil, "")
	first := items.body["items"].([]any)[1].(map[string]any)
	body := first["request"].(map[string]any)["body"].(map[string]any)
	content := body["messages"].([]any)[0].(map[string]any)["content"].(string)
	if !strings.HasPrefix(content, "Q: There are 15 trees in the grove.") || strings.Count(content, "The answer is") != 8 ||
		!strings.HasSuffix(content, "\n\nQ: Tom has 1 apples and buys 2. How many now?\nA:") || fmt.Sprint(body["stop"]) != "[Q: </s> <|im_end|>]" {
		t.Fatalf("item 1's request: %q stop %v", content, body["stop"])
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if page := c.get("/datasets"); page.doc.Find(`[data-testid="upload-exemplars"] option[value="gsm8k-cot"]`).Length() != 1 {
		t.Errorf("the upload form offers no gsm8k-cot exemplars")
	}
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"more","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":64},"fewshot":{"k":2}}`, up.body["dataset_id"])
	if res := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json"); res.status != 422 ||
		!strings.Contains(fmt.Sprint(res.body["errors"]), "already 8-shot") {
		t.Fatalf("few-shot on top of the exemplars: %d %v", res.status, res.body)
	}
}

// A manifest's fewshot: {exemplars: gsm8k-cot} asks every item with
// lm-eval's 8 gsm8k_cot exemplars ("Q: … A: …", its stops), the item's own
// question last; the run says which set. An unknown set, a k beside it
// and a dataset with items it cannot ask are refused naming the field.
func TestAPIFewShotExemplarsInTheManifest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	const items = 6
	up := e.upload(tok, "gsm8k-test.jsonl", []byte(gsm8kFile(items)), nil)
	if up.status != 201 {
		t.Fatalf("upload: %d %v", up.status, up.body)
	}
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	create := func(fewshot string, dataset any) apiResult {
		manifest := fmt.Sprintf(`{"name":"gsm8k cot","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
			"load":{"profile":"sequential"},"sampling":{"max_tokens":64},"fewshot":%s}`, dataset, fewshot)
		return e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	}
	for _, c := range []struct{ fewshot, want string }{
		{`{"exemplars":"gsm8k-cod"}`, "no fixed exemplar set is called \"gsm8k-cod\" (known: gsm8k-cot)"},
		{`{"exemplars":"gsm8k-cot","k":3}`, "leave k and seed out beside it"},
	} {
		res := create(c.fewshot, up.body["dataset_id"])
		if res.status != 422 || !strings.Contains(fmt.Sprint(res.body), "fewshot.exemplars") || !strings.Contains(fmt.Sprint(res.body), c.want) {
			t.Errorf("%s: %d %v", c.fewshot, res.status, res.body)
		}
	}
	res := create(`{"exemplars":"gsm8k-cot"}`, up.body["dataset_id"])
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	run := res.body["runs"].([]any)[0].(map[string]any)
	if run["fewshot_k"] != float64(8) || run["fewshot_exemplars"] != "gsm8k-cot" {
		t.Fatalf("run %v", run)
	}
	runID := int64(run["run_id"].(float64))
	pending, err := e.store.PendingItems(ctx, runID, int64(up.body["dataset_id"].(float64)), items)
	if err != nil || len(pending) != items {
		t.Fatalf("pending: %d %v", len(pending), err)
	}
	first := dataset.ExemplarSets()[0].Examples[0].Question
	for i, p := range pending {
		c, stop := oneMessage(t, i, p.Request)
		own := fmt.Sprintf("Q: Tom has %d apples and buys 2. How many now?\nA:", i)
		if !strings.HasPrefix(c, "Q: "+first) || strings.Count(c, "\nA: ") != 8 || !strings.HasSuffix(c, "\n\n"+own) ||
			fmt.Sprint(stop) != "[Q: </s> <|im_end|>]" {
			t.Fatalf("item %d's request:\n%s\nstop %q", i, c, stop)
		}
	}
	// The run's page says which set it asked with.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if got := c.get(fmt.Sprintf("/runs/%d", runID)).text(`[data-testid="run-fewshot"]`); !strings.Contains(got, "8-shot with the fixed gsm8k-cot exemplars") {
		t.Errorf("run page: %q", got)
	}
	// A dataset with items without a reference cannot take them.
	other := e.upload(tok, "plain.jsonl", []byte(simpleJSONL), nil)
	if res := create(`{"exemplars":"gsm8k-cot"}`, other.body["dataset_id"]); res.status != 422 || !strings.Contains(fmt.Sprint(res.body), "fewshot.exemplars") {
		t.Errorf("a dataset without bare questions: %d %v", res.status, res.body)
	}
}

// oneMessage is the one chat message and the stops of item i's request.
func oneMessage(t *testing.T, i int, request []byte) (string, []string) {
	t.Helper()
	var req struct {
		Body struct {
			Messages []struct{ Content string } `json:"messages"`
			Stop     []string                   `json:"stop"`
		} `json:"body"`
	}
	if err := json.Unmarshal(request, &req); err != nil || len(req.Body.Messages) != 1 {
		t.Fatalf("item %d: %s (%v)", i, request, err)
	}
	return req.Body.Messages[0].Content, req.Body.Stop
}
