package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gofiber/fiber/v2"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/handlers"
)

// The contract: every /api/v1 route of the route table is described in
// handlers/openapi.yaml and every description has its route, and every
// /api/v1 exchange that any handler test makes through env.app is
// validated against the description (the response always, the request
// when the server accepted it). TestMain reports which operations the
// tests exercised.

// contractApp is the server under test with its Test wrapped: each
// /api/v1 exchange is held to the OpenAPI description, and a mismatch
// fails the test that made it.
type contractApp struct {
	*fiber.App
	t *testing.T
}

// Test serves req as fiber's Test does, then validates the exchange.
func (a *contractApp) Test(req *http.Request, msTimeout ...int) (*http.Response, error) {
	if !strings.HasPrefix(req.URL.Path, "/api/v1/") {
		return a.App.Test(req, msTimeout...)
	}
	var reqBody []byte
	if req.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	// What the validator reads: a copy, since the app consumes req.
	seen := req.Clone(req.Context())
	seen.Body = io.NopCloser(bytes.NewReader(reqBody))
	res, err := a.App.Test(req, msTimeout...)
	if err != nil {
		return res, err
	}
	resBody, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(resBody))
	copyRes := *res
	copyRes.Body = io.NopCloser(bytes.NewReader(resBody))
	for _, problem := range contract().check(seen, &copyRes) {
		a.t.Errorf("OpenAPI contract: %s %s → %d: %s", seen.Method, seen.URL.RequestURI(), res.StatusCode, problem)
	}
	return res, nil
}

// apiContract is the description loaded once for the package, with the
// operations the tests have exercised.
type apiContract struct {
	mu sync.Mutex
	// v checks in strict mode (an undescribed property fails); lax checks
	// the description itself, whose paths and schemas are open-ended.
	v, lax    validator.Validator
	loadErr   error
	templates []opTemplate
	hits      map[string]int // "GET /datasets/{id}" → exchanges
}

// opTemplate is one described operation with its path split into
// segments ("" matches any one segment: a path parameter).
type opTemplate struct {
	method, path string
	segments     []string
	literal      int
}

var (
	contractOnce sync.Once
	contractSpec *apiContract
)

func contract() *apiContract {
	contractOnce.Do(func() {
		c := &apiContract{hits: map[string]int{}}
		contractSpec = c
		spec, err := handlers.OpenAPIDocument()
		if err != nil {
			c.loadErr = err
			return
		}
		doc, err := libopenapi.NewDocument(spec)
		if err != nil {
			c.loadErr = err
			return
		}
		v, errs := validator.NewValidator(doc, config.WithFormatAssertions(), config.WithStrictMode(),
			config.WithStrictIgnoredHeadersExtra("X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy",
				"Content-Security-Policy", "Cache-Control", "Content-Disposition", "Www-Authenticate"),
			// Free-form data the description says is free-form: maps keyed
			// by data (error classes, pass@k, figures' sources, a sim's
			// models) and what users wrote (items, manifests, schemas).
			config.WithStrictIgnorePaths("$.body.**.errors_by_class.*", "$.body.**.counts.*", "$.body.**.pass_at.*",
				"$.body.**.sources.*", "$.body.**.accuracy.*", "$.body.items[*].request.**", "$.body.items[*].reference.**",
				"$.body.**.gpu_summary.**", "$.body.**.scorer_options.**", "$.body.manifest.**", "$.body.**.schema.**",
				"$.body.**.ruckus.**", "$.body.results[*].response.body.**", "$.body.runs[*].**",
				// Fleet manifests and reports: described at the top level only.
				"$.body.scenarios[*].**", "$.body.targets[*].**", "$.body.providers[*].**", "$.body.categories[*].**", "$.body.rows[*].**",
				// The fleet document's scenario profiles: a map keyed by scenario.
				"$.body.scenario_profiles.*",
				// Engine settings: a map keyed by the runtime's setting names.
				"$.body.**.engine.*"))
		if len(errs) > 0 {
			c.loadErr = fmt.Errorf("%v", errs)
			return
		}
		lax, errs := validator.NewValidator(doc, config.WithFormatAssertions())
		if len(errs) > 0 {
			c.loadErr = fmt.Errorf("%v", errs)
			return
		}
		c.v, c.lax = v, lax
		for _, op := range specOperations(nil) {
			c.templates = append(c.templates, newOpTemplate(op.method, op.path))
		}
	})
	return contractSpec
}

func newOpTemplate(method, path string) opTemplate {
	t := opTemplate{method: method, path: path}
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		if strings.HasPrefix(seg, "{") {
			seg = ""
		} else {
			t.literal++
		}
		t.segments = append(t.segments, seg)
	}
	return t
}

// match is the described operation a request to /api/v1+path is, or false.
func (c *apiContract) match(method, path string) (opTemplate, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best opTemplate
	found := false
	for _, t := range c.templates {
		if t.method != method || len(t.segments) != len(segs) {
			continue
		}
		ok := true
		for i, s := range t.segments {
			if s != "" && s != segs[i] || segs[i] == "" {
				ok = false
				break
			}
		}
		if ok && (!found || t.literal > best.literal) {
			best, found = t, true
		}
	}
	return best, found
}

// check validates one exchange and records the operation it exercised.
func (c *apiContract) check(req *http.Request, res *http.Response) []string {
	if c.loadErr != nil {
		return []string{"the description does not load: " + c.loadErr.Error()}
	}
	method := req.Method
	if method == http.MethodHead {
		return nil // a GET without its body: nothing to validate
	}
	op, ok := c.match(method, strings.TrimPrefix(req.URL.Path, "/api/v1"))
	if !ok {
		// No such operation: only the API's own 404 may answer it (the
		// route table test says every route is described).
		if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
			return []string{"answered, but no operation in the description matches"}
		}
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits[op.method+" "+op.path]++
	v := c.v
	if op.path == "/openapi.json" || op.path == "/openapi.yaml" {
		v = c.lax
	}
	var problems []string
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		// The server accepted the request: the description must too.
		if ok, errs := v.ValidateHttpRequestSync(req); !ok {
			problems = append(problems, describe("request", errs)...)
		}
	}
	if ok, errs := v.ValidateHttpResponse(req, res); !ok {
		problems = append(problems, describe("response", errs)...)
	}
	return problems
}

func describe[E interface{ Error() string }](what string, errs []E) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, what+": "+e.Error())
	}
	return out
}

// TestMain reports, after the package's tests, which described operations
// the handler tests exercised.
func TestMain(m *testing.M) {
	code := m.Run()
	if c := contractSpec; c != nil && c.loadErr == nil {
		var missed []string
		for _, t := range c.templates {
			if c.hits[t.method+" "+t.path] == 0 {
				missed = append(missed, t.method+" "+t.path)
			}
		}
		exchanges := 0
		for _, n := range c.hits {
			exchanges += n
		}
		fmt.Printf("openapi contract: %d of %d operations exercised (%d validated exchanges)\n",
			len(c.templates)-len(missed), len(c.templates), exchanges)
		if len(missed) > 0 {
			fmt.Printf("openapi contract: not exercised: %s\n", strings.Join(missed, ", "))
		}
	}
	os.Exit(code)
}

// specOperation is one operation of the description.
type specOperation struct {
	method, path, access, id string
}

// specOperations reads the description's operations (paths under the
// /api/v1 server), failing t when it does not parse.
func specOperations(t *testing.T) []specOperation {
	raw, err := handlers.OpenAPIDocument()
	if err != nil {
		if t != nil {
			t.Fatal(err)
		}
		return nil
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		if t != nil {
			t.Fatal(err)
		}
		return nil
	}
	var ops []specOperation
	for path, item := range doc.Paths {
		for method, body := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
			default:
				continue // parameters, summary, …
			}
			var op struct {
				Access string `json:"x-ruckus-access"`
				ID     string `json:"operationId"`
			}
			_ = json.Unmarshal(body, &op)
			ops = append(ops, specOperation{method: strings.ToUpper(method), path: path, access: op.Access, id: op.ID})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

var fiberParam = regexp.MustCompile(`:(\w+)(<\w+>)?`)

// TestOpenAPIDescribesEveryAPIRoute holds the description to the route
// table: the same operations (method and path, Fiber's :id<int> written
// {id}; HEAD goes with GET) and the same access, each way round.
func TestOpenAPIDescribesEveryAPIRoute(t *testing.T) {
	t.Parallel()
	_, routes := handlers.NewWithRoutes(handlers.Deps{SessionKey: []byte("0123456789abcdef0123456789abcdef"), MaxRequestBytes: 1 << 20})
	table := map[string]handlers.Access{}
	for _, r := range routes {
		path, ok := strings.CutPrefix(r.Path, "/api/v1")
		if !ok || r.Method == http.MethodHead {
			continue
		}
		table[r.Method+" "+fiberParam.ReplaceAllString(path, "{$1}")] = r.Access
	}
	spec := map[string]specOperation{}
	ids := map[string]bool{}
	for _, op := range specOperations(t) {
		spec[op.method+" "+op.path] = op
		if op.id == "" || ids[op.id] {
			t.Errorf("%s %s: operationId %q is missing or not unique", op.method, op.path, op.id)
		}
		ids[op.id] = true
	}
	var undescribed, unrouted []string
	for k, access := range table {
		op, ok := spec[k]
		if !ok {
			undescribed = append(undescribed, k)
			continue
		}
		if op.access != string(access) {
			t.Errorf("%s: the description says x-ruckus-access %q, the route table %q", k, op.access, access)
		}
	}
	for k := range spec {
		if _, ok := table[k]; !ok {
			unrouted = append(unrouted, k)
		}
	}
	sort.Strings(undescribed)
	sort.Strings(unrouted)
	if len(undescribed) > 0 {
		t.Errorf("routes missing from handlers/openapi.yaml: %s", strings.Join(undescribed, ", "))
	}
	if len(unrouted) > 0 {
		t.Errorf("described in handlers/openapi.yaml but not in the route table: %s", strings.Join(unrouted, ", "))
	}
	t.Logf("%d operations in the description / %d /api/v1 routes in the table (HEAD counted with GET)", len(spec), len(table))
	if len(table) < 30 {
		t.Errorf("only %d /api/v1 routes found in the table", len(table))
	}
}

// TestOpenAPIDocumentIsValid checks the description against OpenAPI 3.1's
// own schema, and that its lists of scorers and runtimes are the code's.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	c := contract()
	if c.loadErr != nil {
		t.Fatal(c.loadErr)
	}
	if ok, errs := c.v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("openapi.yaml: %v", e)
		}
	}
	raw, err := handlers.OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI    string `json:"openapi"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	enumOf := func(schema, prop string) []string {
		var s struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(doc.Components.Schemas[schema], &s); err != nil {
			t.Fatal(err)
		}
		return s.Properties[prop].Enum
	}
	if got, want := enumOf("Manifest", "scorer"), append(slices.Clone(bench.Scorers), bench.ScorerJudge); !slices.Equal(got, want) {
		t.Errorf("Manifest.scorer enum %q, the code's scorers %q", got, want)
	}
	if got := enumOf("Target", "runtime"); !slices.Equal(got, bench.Runtimes) {
		t.Errorf("Target.runtime enum %q, the code's runtimes %q", got, bench.Runtimes)
	}
	var capacity struct {
		Properties struct {
			ReasonCodes struct {
				Items struct {
					Enum []conclude.Exclusion `json:"enum"`
				} `json:"items"`
			} `json:"reason_codes"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(doc.Components.Schemas["Capacity"], &capacity); err != nil {
		t.Fatal(err)
	}
	if got := capacity.Properties.ReasonCodes.Items.Enum; !slices.Equal(got, conclude.Exclusions()) {
		t.Errorf("Capacity.reason_codes enum %q, the planner's %q", got, conclude.Exclusions())
	}
	// The YAML and the JSON served say the same.
	var fromYAML, fromJSON any
	if err := json.Unmarshal(raw, &fromJSON); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(src, &fromYAML); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromYAML)
	b, _ := json.Marshal(fromJSON)
	if !bytes.Equal(a, b) {
		t.Error("the served JSON differs from openapi.yaml")
	}
}

// TestOpenAPIContractCatchesMismatches shows the validation can fail: real
// answers altered to break the description are refused.
func TestOpenAPIContractCatchesMismatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.createUser("ada@example.com", "correct horse", "user")
	tok := e.token(u)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := e.app.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var me map[string]any
	if err := json.Unmarshal(body, &me); err != nil {
		t.Fatal(err)
	}
	check := func(name string, mutate func(map[string]any), status int) []string {
		m := map[string]any{}
		for k, v := range me {
			m[k] = v
		}
		mutate(m)
		b, _ := json.Marshal(m)
		r := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(b))}
		q := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
		q.Header.Set("Authorization", "Bearer "+tok)
		return contract().check(q, r)
	}
	if p := check("as served", func(map[string]any) {}, 200); len(p) > 0 {
		t.Fatalf("the real answer is refused: %v", p)
	}
	for name, mutate := range map[string]func(map[string]any){
		"a field missing":           func(m map[string]any) { delete(m, "email") },
		"a field of the wrong type": func(m map[string]any) { m["id"] = "one" },
		"an undescribed field":      func(m map[string]any) { m["password_hash"] = "x" },
		"a value outside its enum":  func(m map[string]any) { m["role"] = "root" },
	} {
		if p := check(name, mutate, 200); len(p) == 0 {
			t.Errorf("%s: passed the contract", name)
		}
	}
	if p := check("undocumented status", func(map[string]any) {}, 418); len(p) == 0 {
		t.Error("a success body under an error status passed the contract")
	}
}

// TestAPIDocsAndDescriptionAreOpen: anyone may read the description and
// its reference page, which loads the vendored viewer on it.
func TestAPIDocsAndDescriptionAreOpen(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ops int
	for _, r := range e.routes {
		if (r.Path == handlers.OpenAPIPath || r.Path == handlers.OpenAPIYAMLPath || r.Path == "/api/docs") && r.Access == handlers.Anyone {
			ops++
		}
	}
	if ops != 6 { // GET and HEAD of each
		t.Errorf("%d Anyone routes for the description (JSON, YAML) and its page, want 6", ops)
	}
	res, err := e.app.Test(httptest.NewRequest(http.MethodGet, handlers.OpenAPIYAMLPath, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	yml, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/yaml") || !bytes.HasPrefix(yml, []byte("openapi: 3.1.0")) {
		t.Fatalf("GET %s without a token: %d %s %.40q", handlers.OpenAPIYAMLPath, res.StatusCode, res.Header.Get("Content-Type"), yml)
	}
	res, err = e.app.Test(httptest.NewRequest(http.MethodGet, handlers.OpenAPIPath, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s without a token: %d %s", handlers.OpenAPIPath, res.StatusCode, res.Header.Get("Content-Type"))
	}
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("the description is not OpenAPI 3.1 JSON: %v %v", err, doc["openapi"])
	}

	page := e.client().get("/api/docs")
	if page.status != 200 {
		t.Fatalf("GET /api/docs: %d", page.status)
	}
	if got, _ := page.doc.Find(`[data-testid="api-docs"]`).Attr("data-spec-url"); got != handlers.OpenAPIPath {
		t.Errorf("the viewer reads %q, want %s", got, handlers.OpenAPIPath)
	}
	if href, _ := page.doc.Find(`[data-testid="openapi-link"]`).Attr("href"); href != handlers.OpenAPIPath {
		t.Errorf("the page links the description as %q", href)
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("the docs page's CSP: %s", csp)
	}
	if n := page.doc.Find("script:not([src])").Length(); n > 0 {
		t.Errorf("%d inline scripts on the docs page; the CSP refuses them", n)
	}
	want := map[string]string{"swagger-ui-bundle": "javascript", "api-docs": "javascript", "swagger-ui.": "css"}
	found := 0
	page.doc.Find("script[src], link[rel=stylesheet]").Each(func(_ int, s *goquery.Selection) {
		url := s.AttrOr("src", s.AttrOr("href", ""))
		for name, kind := range want {
			if strings.Contains(url, "/assets/"+name) {
				found++
				a := e.client().get(url)
				if a.status != 200 || !strings.Contains(a.header.Get("Content-Type"), kind) || len(a.body) < 100 {
					t.Errorf("%s: %d %s, %d bytes", url, a.status, a.header.Get("Content-Type"), len(a.body))
				}
			}
		}
	})
	if found != len(want) {
		t.Errorf("the page loads %d of the viewer's %d files", found, len(want))
	}
}
