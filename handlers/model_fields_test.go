package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// A model is written and read with the same field names: a field the API
// does not know is refused with 422 naming it (never dropped), and a
// fine-tune's base model is base_model_id both ways.
func TestModelFieldsAreOneNameEachWay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("root@example.com", "correct horse", store.RoleAdmin))
	call := func(method, path, body string) apiResult {
		return e.api(method, path, tok, strings.NewReader(body), "application/json")
	}
	base := call(http.MethodPost, "/api/v1/models", `{"name":"org/base","params_b":7,"quantization":"bf16","context_length":4096}`)
	if base.status != 201 {
		t.Fatalf("base: %d %v", base.status, base.body)
	}
	baseID := base.body["model_id"].(float64)
	for _, bad := range []struct{ body, field string }{
		{`{"name":"org/x","params_b":1,"quantization":"bf16","context_length":4096,"frobnicate":42}`, "frobnicate"},
		{fmt.Sprintf(`{"name":"org/ft","params_b":7,"quantization":"bf16","context_length":4096,"base_model":%v}`, baseID), "base_model"},
	} {
		r := call(http.MethodPost, "/api/v1/models", bad.body)
		if path, msg := firstError(r); r.status != 422 || path != bad.field || !strings.Contains(msg, "unknown field") {
			t.Fatalf("%s: %d %v, want 422 naming %q", bad.body, r.status, r.body, bad.field)
		}
	}
	ft := call(http.MethodPost, "/api/v1/models", fmt.Sprintf(`{"name":"org/ft","params_b":7,"quantization":"bf16","context_length":4096,"base_model_id":%v}`, baseID))
	if ft.status != 201 {
		t.Fatalf("fine-tune: %d %v", ft.status, ft.body)
	}
	if r := call(http.MethodPut, fmt.Sprintf("/api/v1/models/%v", ft.body["model_id"]), `{"name":"org/ft","params_b":7,"quantization":"bf16","context_length":4096,"extra":1}`); r.status != 422 {
		t.Fatalf("update with an unknown field: %d %v", r.status, r.body)
	}
	list := call(http.MethodGet, "/api/v1/models", "")
	found := false
	for _, m := range list.body["models"].([]any) {
		m := m.(map[string]any)
		if _, old := m["base_model"]; old {
			t.Fatalf("a model is read with base_model: %v", m)
		}
		if m["name"] == "org/ft" {
			found = m["base_model_id"] == baseID
		}
		if m["name"] == "org/base" && m["base_model_id"] != nil {
			t.Fatalf("a base model reads a base: %v", m)
		}
	}
	if !found {
		t.Fatalf("the fine-tune does not read base_model_id %v: %v", baseID, list.body)
	}
}
