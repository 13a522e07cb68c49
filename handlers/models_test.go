package handlers_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

func modelForm(name, params, quant, ctx, memory string) url.Values {
	return url.Values{"name": {name}, "display_name": {"Test " + name}, "family": {"test"}, "params_b": {params},
		"quantization": {quant}, "context_length": {ctx}, "license": {"apache-2.0"}, "memory_gb": {memory}}
}

func TestAdminModelRegistry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	c := e.client()
	c.signIn("root@example.com", "correct horse")
	c.get("/admin/models")

	res := c.post("/admin/models", modelForm("not a name!", "-1", "bf3", "lots", "zero"))
	if res.status != 422 {
		t.Fatalf("invalid model: %d", res.status)
	}
	for _, f := range []string{"name", "params_b", "quantization", "context_length", "memory_gb"} {
		if res.text(`[data-testid="error-`+f+`"]`) == "" {
			t.Errorf("no message beside %s", f)
		}
	}

	res = c.post("/admin/models", modelForm("Qwen/Qwen2.5-7B-Instruct", "7", "bf16", "32768", ""))
	if res.status != 200 || res.text(`[data-testid="model-saved"]`) == "" {
		t.Fatalf("add model: %d %.300s", res.status, res.body)
	}
	// 7 B at bf16 with the 20 % allowance: 16.8 GB, marked as an estimate.
	if got := res.text(`[data-testid="model-Qwen/Qwen2.5-7B-Instruct"] [data-testid="model-memory"]`); got != "≈ 16.8 GB (estimated)" {
		t.Fatalf("memory shown = %q", got)
	}
	if res := c.post("/admin/models", modelForm("Qwen/Qwen2.5-7B-Instruct", "7", "bf16", "32768", "")); res.status != 422 ||
		!strings.Contains(res.text(`[data-testid="error-name"]`), "already registered") {
		t.Fatalf("duplicate model: %d", res.status)
	}

	ms, err := e.store.ListModels(context.Background())
	if err != nil || len(ms) != 1 {
		t.Fatalf("models: %v %v", ms, err)
	}
	base := ms[0]
	// A fine-tuned adapter on it, with a given memory figure.
	form := modelForm("acme/qwen-support-lora", "7", "bf16", "32768", "18.5")
	form.Set("base_model_id", itoa(base.ID))
	form.Set("adapter", "1")
	if res := c.post("/admin/models", form); res.status != 200 ||
		res.text(`[data-testid="model-acme/qwen-support-lora"] [data-testid="model-memory"]`) != "18.5 GB" {
		t.Fatalf("add adapter: %d", res.status)
	}
	noBase := modelForm("acme/orphan-lora", "7", "bf16", "32768", "")
	noBase.Set("adapter", "1")
	if res := c.post("/admin/models", noBase); res.status != 422 || res.text(`[data-testid="error-base_model_id"]`) == "" {
		t.Fatalf("adapter without base: %d", res.status)
	}

	// Edit: becomes a 4-bit quantisation.
	c.get("/admin/models/" + itoa(base.ID))
	if res := c.post("/admin/models/"+itoa(base.ID), modelForm("Qwen/Qwen2.5-7B-Instruct-AWQ", "7", "awq", "32768", "")); res.status != 303 {
		t.Fatalf("edit: %d %.300s", res.status, res.body)
	}
	m, err := e.store.ModelByID(context.Background(), base.ID)
	if err != nil || m.Name != "Qwen/Qwen2.5-7B-Instruct-AWQ" || m.Quantization != "awq" {
		t.Fatalf("after edit: %+v %v", m, err)
	}
	if res := c.post("/admin/models/"+itoa(base.ID), modelForm("acme/qwen-support-lora", "7", "awq", "32768", "")); res.status != 422 {
		t.Fatalf("rename onto another model: %d", res.status)
	}

	// Retire and restore.
	if res := c.post("/admin/models/"+itoa(base.ID)+"/retire", nil); res.status != 303 {
		t.Fatalf("retire: %d", res.status)
	}
	page := c.get("/admin/models")
	if !strings.Contains(page.text(`[data-testid="model-Qwen/Qwen2.5-7B-Instruct-AWQ"]`), "retired") {
		t.Fatal("retired model not shown as retired")
	}
	c.post("/admin/models/"+itoa(base.ID)+"/restore", nil)
	if m, _ := e.store.ModelByID(context.Background(), base.ID); m.RetiredAt != nil {
		t.Fatal("restore did not restore")
	}

	// Users are kept out.
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	u := e.client()
	u.signIn("ada@example.com", "correct horse")
	if res := u.get("/admin/models"); res.status != 403 {
		t.Fatalf("user on /admin/models: %d", res.status)
	}
}
