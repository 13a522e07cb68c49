package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// badInputEnv is a user with a dataset, a finished run with results on it
// (run A, through an agent's lease) and a second run on the same dataset
// (run B, imported), so every page that takes an id or a cursor has
// something to show.
type badInputEnv struct {
	*env
	tok                            string
	c                              *client
	benchmark, dataset, runA, runB string
}

func newBadInputEnv(t *testing.T) badInputEnv {
	t.Helper()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, runA := runWithResults(t, e, tok, 30, func(i int) string { return fmt.Sprintf("answer %d", i) })
	var dataset int64
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&dataset); err != nil {
		t.Fatal(err)
	}
	var customID string
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT custom_id FROM dataset_items WHERE dataset_id = $1 AND idx = 1`, dataset).Scan(&customID); err != nil {
		t.Fatal(err)
	}
	body, ct := multipartBody(t, "out.jsonl", []byte(`{"custom_id":"`+customID+`","output":"1"}`+"\n"), map[string]string{"model": "m/small"})
	imp := e.api(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%d/imports", dataset), tok, body, ct)
	if imp.status != 201 {
		t.Fatalf("import: %d %v", imp.status, imp.body)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	return badInputEnv{env: e, tok: tok, c: c, benchmark: b, dataset: fmt.Sprint(dataset), runA: fmt.Sprint(runA), runB: fmt.Sprint(imp.body["run_id"])}
}

// check asks for path (through the API with a token when it starts with
// /api/) and wants status and a body that says want.
func (b badInputEnv) check(t *testing.T, path string, status int, want string) {
	t.Helper()
	var got int
	var body string
	if strings.HasPrefix(path, "/api/") {
		got, _, body = b.raw(path, b.tok)
	} else {
		res := b.c.get(path)
		got, body = res.status, res.text("main")
	}
	if got != status || !strings.Contains(body, want) {
		t.Errorf("GET %s: %d %.300q; want %d saying %q", path, got, body, status, want)
	}
}

// Ids and cursors beyond their column's type (integer item indices,
// bigint row ids), negative or not numbers at all are refused with a
// message naming the parameter, never passed on to PostgreSQL (which
// answered "out of range for type integer", a 500).
func TestIDsAndCursorsOutOfRangeAreRefusedNamingTheParameter(t *testing.T) {
	t.Parallel()
	b := newBadInputEnv(t)
	const idx = "a whole number from 0 to 2147483647"
	const id = "a whole number from 1 to 9223372036854775807"
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		// A run's results page: the keyset cursor is KEY:IDX.
		{"/runs/" + b.runA + "?after=0:2147483648", 422, "after must be " + idx},
		{"/runs/" + b.runA + "?sort=e2e&after=12.5:2147483648", 422, "after must be " + idx},
		{"/runs/" + b.runA + "?after=0:-1", 422, "after must be " + idx},
		{"/runs/" + b.runA + "?after=NaN:5", 422, "after must be a cursor KEY:IDX"},
		{"/runs/" + b.runA + "?after=x", 422, "after must be a cursor KEY:IDX"},
		{"/runs/" + b.runA + "?q=%00", 422, "q must be UTF-8 text without NUL characters"},
		{"/runs/" + b.runA + "?custom_id=%ff", 422, "custom_id must be UTF-8 text without NUL characters"},
		{"/runs/" + b.runA + "?min_score=NaN", 422, "Score ≥ must be a number from 0 to 1"},
		{"/runs/-1", 404, "id must be " + id},
		// An item's page.
		{"/runs/" + b.runA + "/items/2147483648", 404, "idx must be " + idx},
		{"/runs/" + b.runA + "/items/-1", 404, "idx must be " + idx},
		// The comparison: run ids, the baseline and the item cursor.
		{"/compare?runs=" + b.runA + "," + b.runB + "&after=2147483648", 422, "after must be " + idx},
		{"/compare?runs=" + b.runA + "," + b.runB + "&after=-1", 422, "after must be " + idx},
		{"/compare?runs=" + b.runA + "," + b.runB + "&after=1e3", 422, "after must be " + idx},
		{"/compare?runs=" + b.runA + ",99999999999999999999", 422, "runs must be " + id},
		{"/compare?runs=" + b.runA + ",-" + b.runB, 422, "runs must be " + id},
		{"/compare?runs=" + b.runA + "," + b.runB + "&baseline=2147483648000", 422, "baseline must be one of the runs compared"},
		{"/compare?runs=" + b.runA + "," + b.runB + "&baseline=x", 422, "baseline must be " + id},
		// Datasets, benchmarks and runs by id.
		{"/datasets/-1", 404, "id must be " + id},
		{"/datasets/0", 404, "id must be " + id},
		{"/benchmarks/" + b.benchmark + "/runs/-1/card", 404, "run must be " + id},
		// The API twins.
		{"/api/v1/datasets/" + b.dataset + "/items?after=2147483648", 400, "after must be " + idx},
		{"/api/v1/datasets/" + b.dataset + "/items?after=-1", 400, "after must be " + idx},
		{"/api/v1/datasets/" + b.dataset + "/items?after=abc", 400, "after must be " + idx},
		{"/api/v1/datasets/" + b.dataset + "/items?limit=99999999999", 400, "limit must be between 1 and 1000"},
		{"/api/v1/datasets/-1/items", 404, "id must be " + id},
		{"/api/v1/runs/-1/results", 404, "id must be " + id},
		{"/api/v1/benchmarks/-1", 404, "id must be " + id},
	} {
		b.check(t, tc.path, tc.status, tc.want)
	}
	// Values within bounds still work.
	b.check(t, "/runs/"+b.runA+"/items/0", 200, "answer 0")
	b.check(t, "/runs/"+b.runA+"?after=0:2147483647", 200, "")
	b.check(t, "/compare?runs="+b.runA+","+b.runB+"&after=0&baseline="+b.runB, 200, "")
	b.check(t, "/api/v1/datasets/"+b.dataset+"/items?after=2147483647&limit=1000", 200, `"items":[]`)
}

// NaN and infinities parse as numbers and pass every "x < 0" check; in
// the recommendation's constraints and weights they are refused naming
// the field (they used to reach the ranking, and the JSON encoder).
func TestNonFiniteRecommendationInputsAreRefused(t *testing.T) {
	t.Parallel()
	b := newBadInputEnv(t)
	for _, q := range []struct{ query, field string }{
		{"w_quality=NaN", "w_quality"},
		{"w_speed=Inf", "w_speed"},
		{"w_cost=-Inf", "w_cost"},
		{"w_quality=1e308&w_speed=1e308", "w_quality"},
		{"min_quality=NaN", "min_quality"},
		{"max_cost=%2BInf", "max_cost"},
		{"max_ttft_p95=1e999", "max_ttft_p95"},
		{"max_e2e_p95=nan", "max_e2e_p95"},
		{"max_gpu_mem=infinity", "max_gpu_mem"},
	} {
		b.check(t, "/benchmarks/"+b.benchmark+"/recommend?"+q.query, 422, q.field+" must be a")
		b.check(t, "/api/v1/benchmarks/"+b.benchmark+"/recommendation?"+q.query, 422, q.field+" must be a")
	}
	b.check(t, "/api/v1/benchmarks/"+b.benchmark+"/recommendation?w_quality=2&max_cost=1e9", 200, `"feasible"`)
}

// A manifest's .nan and .inf (YAML) are refused at dry run as at launch,
// naming the field; they used to pass the dry run and fail the launch
// with a 500 when the job was written.
func TestNonFiniteManifestNumbersAreRefusedAtDryRun(t *testing.T) {
	t.Parallel()
	b := newBadInputEnv(t)
	for _, tc := range []struct{ load, sampling, field string }{
		{"{profile: poisson, rate: .nan}", "{max_tokens: 8}", "load.rate"},
		{"{profile: constant-rate, rate: .inf}", "{max_tokens: 8}", "load.rate"},
		{"{profile: sequential}", "{max_tokens: 8, temperature: .nan}", "sampling.temperature"},
		{"{profile: sequential}", "{max_tokens: 8, top_p: .inf}", "sampling.top_p"},
	} {
		manifest := fmt.Sprintf("name: n\ndataset: %s\ntargets: [{model: m/small, runtime: sim, hardware: cpu-2c}]\nload: %s\nsampling: %s\n",
			b.dataset, tc.load, tc.sampling)
		for _, path := range []string{"/api/v1/benchmarks?dry_run=true", "/api/v1/benchmarks"} {
			r := b.api(http.MethodPost, path, b.tok, strings.NewReader(manifest), "application/yaml")
			named := false
			for _, e := range asList(r.body["errors"]) {
				m, _ := e.(map[string]any)
				named = named || (m["path"] == tc.field && strings.Contains(fmt.Sprint(m["message"]), "must be a finite number"))
			}
			if r.status != 422 || !named {
				t.Errorf("POST %s with %s %s: %d %v; want 422 naming %s", path, tc.load, tc.sampling, r.status, r.body, tc.field)
			}
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// Form text PostgreSQL cannot store (a NUL character, invalid UTF-8) is a
// field error on the form, not a database error: token names, users'
// names and emails, models' display names, families and licences; and a
// price of NaN is no price.
func TestFormTextPostgreSQLCannotStoreIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	testkit.Agent(t.Context(), t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
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
		want       string
	}{
		{"/settings", "/settings/tokens", url.Values{"name": {"ci\x00"}}, "The name must be text"},
		{"/admin/users", "/admin/users", url.Values{"email": {"x@example.com"}, "name": {"N\x00"}, "password": {"correct horse"}}, "The name may be at most 200 characters of text"},
		{"/admin/users", "/admin/users", url.Values{"email": {"x\xff@example.com"}, "password": {"correct horse"}}, "Enter a valid email address"},
		{"/admin/models", "/admin/models", model("display_name", "Q\x00"), "no NUL characters"},
		{"/admin/models", "/admin/models", model("family", "\xffq"), "no NUL characters"},
		{"/admin/models", "/admin/models", model("license", "mit\x00"), "no NUL characters"},
		{"/admin/models", "/admin/models", model("params_b", "NaN"), "Enter the parameter count in billions"},
		{"/admin/models", "/admin/models", model("memory_gb", "nan"), "Enter the memory in GB"},
		{"/admin/hardware", "/admin/hardware/cpu-2c/price", url.Values{"price": {"NaN"}}, "Enter a price in USD per hour"},
	} {
		c.get(tc.page)
		res := c.post(tc.path, tc.form)
		if res.status != 422 || !strings.Contains(res.text("main"), tc.want) {
			t.Errorf("POST %s %q: %d %.200q; want 422 saying %q", tc.path, tc.form.Encode(), res.status, res.text("main"), tc.want)
		}
	}
	if n := e.countRows("api_tokens") + e.countRows("models"); n != 0 {
		t.Errorf("%d tokens and models stored", n)
	}
}
