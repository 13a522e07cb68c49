package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// goTypeName matches a Go type name such as bench.Manifest, which no
// message shown to a user may carry.
var goTypeName = regexp.MustCompile(`[a-z]+\.[A-Z][A-Za-z]+`)

// TestFormsRefuseNamingTheField: every form checked by struct tags still
// refuses what it refused, with its message beside the field it is about.
func TestFormsRefuseNamingTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	c := e.client()
	c.signIn("root@example.com", "correct horse")
	model := func(field, value string) url.Values {
		f := modelForm("org/m-"+field, "7", "bf16", "4096", "")
		f.Set(field, value)
		return f
	}
	for _, tc := range []struct {
		page, path string
		form       url.Values
		field      string
		want       string
	}{
		{"/admin/models", "/admin/models", model("name", "--trust-remote-code"), "name", "Enter a model id such as"},
		{"/admin/models", "/admin/models", model("params_b", "many"), "params_b", "Enter the parameter count in billions"},
		{"/admin/models", "/admin/models", model("params_b", "0"), "params_b", "Enter the parameter count in billions"},
		{"/admin/models", "/admin/models", model("params_b", "10001"), "params_b", "Enter the parameter count in billions"},
		{"/admin/models", "/admin/models", model("context_length", "0"), "context_length", "Enter the context length in tokens"},
		{"/admin/models", "/admin/models", model("context_length", "lots"), "context_length", "Enter the context length in tokens"},
		{"/admin/models", "/admin/models", model("quantization", "q1"), "quantization", "Choose a quantisation from the list"},
		{"/admin/models", "/admin/models", model("memory_gb", "-3"), "memory_gb", "Enter the memory in GB"},
		{"/admin/models", "/admin/models", model("display_name", strings.Repeat("x", 201)), "display_name", "At most 200 characters"},
		{"/admin/models", "/admin/models", model("base_model_id", "x"), "base_model_id", "Choose another model as the base"},
		{"/admin/models", "/admin/models", model("adapter", "on"), "base_model_id", "An adapter needs its base model"},
		{"/admin/users", "/admin/users", url.Values{"email": {"not an email"}, "password": {"correct horse"}}, "email", "Enter a valid email address"},
		{"/admin/users", "/admin/users", url.Values{"email": {"x@example.com"}, "password": {"short"}}, "password", "The password must be 8 to 72 characters long"},
		// 40 characters, 80 bytes: bcrypt would cut it short.
		{"/admin/users", "/admin/users", url.Values{"email": {"x@example.com"}, "password": {strings.Repeat("é", 40)}}, "password", "The password must be 8 to 72 characters long"},
		{"/settings", "/settings/password", url.Values{"current": {"correct horse"}, "new": {"short"}, "confirm": {"short"}}, "new", "The new password must be 8 to 72 characters long"},
		{"/settings", "/settings/password", url.Values{"current": {"correct horse"}, "new": {"battery staple"}, "confirm": {"battery stapler"}}, "confirm", "The two new passwords differ"},
		{"/settings", "/settings/password", url.Values{"current": {"wrong horse"}, "new": {"battery staple"}, "confirm": {"battery staple"}}, "current", "This is not your current password"},
	} {
		c.get(tc.page)
		res := c.post(tc.path, tc.form)
		got := res.text(fmt.Sprintf(`[data-testid="error-%s"]`, tc.field))
		if res.status != 422 || !strings.Contains(got, tc.want) {
			t.Errorf("POST %s %q: %d, beside %s %q; want 422 saying %q", tc.path, tc.form.Encode(), res.status, tc.field, got, tc.want)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"  ", "Give the token a name"},
		{strings.Repeat("t", 101), "at most 100 characters"},
	} {
		c.get("/settings")
		res := c.post("/settings/tokens", url.Values{"name": {tc.name}})
		if res.status != 422 || !strings.Contains(res.text("main"), tc.want) {
			t.Errorf("token %q: %d %.200q; want 422 saying %q", tc.name, res.status, res.text("main"), tc.want)
		}
	}
	if n := e.countRows("api_tokens") + e.countRows("models"); n != 0 {
		t.Errorf("%d tokens and models stored", n)
	}
	if n := e.countRows("users"); n != 1 {
		t.Errorf("%d users, want the admin alone", n)
	}
}

// TestAPIBodiesRefuseNamingTheField: a JSON body that is not what the
// route takes (an unknown field, a wrong type, a value out of range) is
// refused with the field's path and a message without Go's type names.
func TestAPIBodiesRefuseNamingTheField(t *testing.T) {
	t.Parallel()
	b := newBadInputEnv(t)
	admin := b.token(b.createUser("root@example.com", "correct horse", store.RoleAdmin))
	base := `"name":"n","dataset":` + b.dataset + `,"sampling":{"max_tokens":8}`
	manifest := base + `,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}]`
	models := b.countRows("models")
	for _, tc := range []struct {
		path, token, body string
		key, field, want  string
	}{
		{"/api/v1/benchmarks", b.tok, `{"model_idd":1,` + manifest + `}`, "path", "model_idd", `unknown field "model_idd"`},
		{"/api/v1/benchmarks", b.tok, `{` + manifest + `,"load":{"profile":"concurrency","concurrency":"eight"}}`, "path", "load.concurrency", "must be a whole number"},
		{"/api/v1/benchmarks", b.tok, `{` + manifest + `,"load":{"profile":"concurrency","concurrency":0}}`, "path", "load.concurrency", "between 1 and 4096"},
		{"/api/v1/benchmarks", b.tok, `{` + base + `,"targets":[{"model":"m/small","runtime":"warp","hardware":"cpu-2c"}],"load":{"profile":"sequential"}}`, "path", "targets[0].runtime", "must be one of"},
		{"/api/v1/capacity", b.tok, `{"dataset_id":1,"traffic":{"peak_rps":"ten"}}`, "path", "traffic.peak_rps", "must be a number"},
		{"/api/v1/capacity", b.tok, `{"dataset_id":1,"traffic":{"peak_rps":10,"average_rps":1,"input_tokens":10,"output_tokens":10},"colour":1}`, "path", "colour", `unknown field "colour"`},
		{"/api/v1/capacity", b.tok, `{"dataset_id":1,"traffic":{"peak_rps":10,"average_rps":20,"input_tokens":10,"output_tokens":10}}`, "path", "traffic.average_rps", "cannot be above the peak"},
		{"/api/v1/capacity", b.tok, `{"dataset_id":0,"traffic":{"peak_rps":10,"average_rps":1,"input_tokens":10,"output_tokens":10}}`, "path", "dataset_id", "choose a dataset"},
		{"/api/v1/runs/" + b.runA + "/judge", b.tok, `{}`, "path", "judge", "name the judge"},
		{"/api/v1/runs/" + b.runA + "/judge", b.tok, `{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},"against":-1}`, "path", "against", "a run id"},
		{"/api/v1/runs/" + b.runA + "/judge", b.tok, `{"judge":{"model":"m/small","runtime":"sim","hardware":""}}`, "path", "judge.hardware", "choose the judge's hardware profile"},
		{"/api/v1/runs/" + b.runA + "/judge", b.tok, `{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c","scale":{"min":"one"}}}`, "path", "judge.scale.min", "must be a whole number"},
		{"/api/v1/datasets/generate", b.tok, `{"kind":"random","count":"many"}`, "path", "count", "must be a whole number"},
		{"/api/v1/datasets/generate", b.tok, `{"kind":"random","input":[1]}`, "path", "input", "must be an object"},
		{"/api/v1/models", admin, `{"name":"--x","params_b":7,"quantization":"bf16","context_length":4096}`, "path", "name", "Enter a model id"},
		{"/api/v1/models", admin, `{"name":"org/m","params_b":"seven","quantization":"bf16","context_length":4096}`, "path", "params_b", "Enter the parameter count"},
	} {
		status, out := apiPostJSON(b.env, tc.path, tc.token, tc.body)
		errs, _ := out["errors"].([]any)
		found := false
		for _, x := range errs {
			fe, _ := x.(map[string]any)
			msg, _ := fe["message"].(string)
			if goTypeName.MatchString(msg) || strings.Contains(msg, "type ") {
				t.Errorf("POST %s %s: message %q names a Go type", tc.path, tc.body, msg)
			}
			if _, old := fe["field"]; old {
				t.Errorf("POST %s %s: an error keyed \"field\": %v; every API says \"path\"", tc.path, tc.body, fe)
			}
			if fe[tc.key] == tc.field && strings.Contains(msg, tc.want) {
				found = true
			}
		}
		if status != 422 || !found {
			t.Errorf("POST %s %s: %d %v; want 422 with %s %q saying %q", tc.path, tc.body, status, out, tc.key, tc.field, tc.want)
		}
	}
	for body, path := range map[string]string{`{"price_per_hour":"ten"}`: "price_per_hour", `{"price_per_hour":-2}`: "price_per_hour", `{"price_per_hour":1,"currency":"EUR"}`: "currency"} {
		r := b.api(http.MethodPut, "/api/v1/hardware/cpu-2c/price", admin, strings.NewReader(body), "application/json")
		errs, _ := r.body["errors"].([]any)
		msg := ""
		if len(errs) == 1 {
			msg, _ = errs[0].(map[string]any)["message"].(string)
		}
		if r.status != 422 || len(errs) != 1 || errs[0].(map[string]any)["path"] != path || goTypeName.MatchString(msg) || strings.Contains(msg, "type ") {
			t.Errorf("PUT price %s: %d %v", body, r.status, r.body)
		}
	}
	if n := b.countRows("models"); n != models {
		t.Errorf("%d models stored, want %d", n, models)
	}
}
