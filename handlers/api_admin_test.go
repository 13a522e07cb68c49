package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// Models, agents and hardware are readable by every user and writable by
// admins through the API.
func TestAPIAdminWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	adminTok := e.token(e.createUser("root@example.com", "correct horse", store.RoleAdmin))
	userTok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	a := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "gpu-1", Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "a100-40gb-x1", GPUName: "A100", GPUCount: 1, GPUMemoryBytes: 40 << 30}})
	call := func(method, path, tok, body string) apiResult {
		return e.api(method, path, tok, strings.NewReader(body), "application/json")
	}

	model := `{"name":"Qwen/Qwen2.5-7B-Instruct","params_b":7.6,"quantization":"bf16","context_length":32768,"license":"apache-2.0"}`
	if r := call(http.MethodPost, "/api/v1/models", userTok, model); r.status != 403 {
		t.Fatalf("user creates a model: %d %v", r.status, r.body)
	}
	r := call(http.MethodPost, "/api/v1/models", adminTok, model)
	if r.status != 201 {
		t.Fatalf("admin creates a model: %d %v", r.status, r.body)
	}
	id := fmt.Sprint(r.body["model_id"])
	if r := call(http.MethodPost, "/api/v1/models", adminTok, model); r.status != 422 || !strings.Contains(fmt.Sprint(r.body["errors"]), "already registered") {
		t.Fatalf("duplicate: %d %v", r.status, r.body)
	}
	if r := call(http.MethodPost, "/api/v1/models", adminTok, `{"name":"x y","params_b":-1,"quantization":"q99","context_length":0}`); r.status != 422 {
		t.Fatalf("invalid model: %d %v", r.status, r.body)
	} else {
		got := fmt.Sprint(r.body["errors"])
		for _, field := range []string{"path:name", "path:params_b", "path:quantization", "path:context_length"} {
			if !strings.Contains(got, field) {
				t.Errorf("errors %s lack %s", got, field)
			}
		}
	}
	if r := call(http.MethodPut, "/api/v1/models/"+id, adminTok, strings.Replace(model, "7.6", "7.61", 1)); r.status != 200 {
		t.Fatalf("update: %d %v", r.status, r.body)
	}
	if r := call(http.MethodPost, "/api/v1/models/"+id+"/retire", adminTok, ""); r.status != 200 {
		t.Fatalf("retire: %d %v", r.status, r.body)
	}
	list := call(http.MethodGet, "/api/v1/models", userTok, "")
	m := list.body["models"].([]any)[0].(map[string]any)
	if m["params_b"] != 7.61 || m["retired"] != true {
		t.Fatalf("model as listed: %v", m)
	}

	agentPath := fmt.Sprintf("/api/v1/agents/%d/", a.ID)
	if r := call(http.MethodPost, agentPath+"drain", userTok, ""); r.status != 403 {
		t.Fatalf("user drains: %d", r.status)
	}
	if r := call(http.MethodPost, agentPath+"drain", adminTok, ""); r.status != 200 {
		t.Fatalf("drain: %d %v", r.status, r.body)
	}
	agents := call(http.MethodGet, "/api/v1/agents", userTok, "").body["agents"].([]any)
	if agents[0].(map[string]any)["state"] != store.AgentDrained {
		t.Fatalf("after drain: %v", agents)
	}
	if r := call(http.MethodPost, "/api/v1/agents/999999/deactivate", adminTok, ""); r.status != 404 {
		t.Fatalf("unknown agent: %d", r.status)
	}

	if r := call(http.MethodPut, "/api/v1/hardware/a100-40gb-x1/price", userTok, `{"price_per_hour":1.5}`); r.status != 403 {
		t.Fatalf("user sets a price: %d", r.status)
	}
	if r := call(http.MethodPut, "/api/v1/hardware/a100-40gb-x1/price", adminTok, `{"price_per_hour":-2}`); r.status != 422 {
		t.Fatalf("negative price: %d", r.status)
	}
	if r := call(http.MethodPut, "/api/v1/hardware/a100-40gb-x1/price", adminTok, `{"price_per_hour":1.5}`); r.status != 200 {
		t.Fatalf("price: %d %v", r.status, r.body)
	}
	// A slug no profile could have is a 404 before it reaches SQL.
	for _, slug := range []string{strings.Repeat("a", 101), "%ff%fe", "a%00b"} {
		if r := call(http.MethodPut, "/api/v1/hardware/"+slug+"/price", adminTok, `{"price_per_hour":1}`); r.status != 404 {
			t.Fatalf("slug %q: %d %v", slug, r.status, r.body)
		}
	}
	hw := call(http.MethodGet, "/api/v1/hardware", userTok, "").body["hardware"].([]any)[0].(map[string]any)
	if hw["slug"] != "a100-40gb-x1" || hw["price_per_hour"] != 1.5 || hw["agents"] != 1.0 {
		t.Fatalf("hardware: %v", hw)
	}
}
