package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/handlers"
)

// accessFixture is what the route walk needs: resources of ada's (the
// owner), two of each kind that a caller may destroy (one for ada, one for
// the administrator), and the other user, bob.
type accessFixture struct {
	dataset, benchmark, run, otherRun string
	doomed                            map[string]string // datasets to delete, by "api? admin?"
	doomedBenchmarks                  map[string]string // benchmarks to delete, by "api? admin?"
	token, tokenForAdmin              string            // ada's API token ids
	user, agent, model, hardware      string
	fleet                             string
	webhooks                          map[bool]string // ada's webhooks to delete, by "api?"
}

// param is the value for path parameter name in path, as caller uses it.
func (f accessFixture) param(t *testing.T, method, path, name, caller string) string {
	t.Helper()
	admin := caller == "admin"
	switch {
	case name == "id" && strings.Contains(path, "/datasets/") && (strings.HasSuffix(path, "/delete") || strings.HasPrefix(path, "/api/") && method == http.MethodDelete):
		// Each delete gets a dataset of its own to delete.
		return f.doomed[fmt.Sprint(strings.HasPrefix(path, "/api/"), admin)]
	case name == "id" && strings.Contains(path, "/datasets/"):
		return f.dataset
	case name == "id" && strings.Contains(path, "/fleets/"):
		return f.fleet
	case name == "id" && strings.Contains(path, "/benchmarks/") && (strings.HasSuffix(path, "/delete") || strings.HasPrefix(path, "/api/") && method == http.MethodDelete):
		// Each delete gets a benchmark of its own to delete.
		return f.doomedBenchmarks[fmt.Sprint(strings.HasPrefix(path, "/api/"), admin)]
	case name == "id" && strings.Contains(path, "/benchmarks/"):
		return f.benchmark
	case name == "id" && strings.Contains(path, "/runs/"), name == "run":
		return f.run
	case name == "idx":
		return "0"
	case name == "id" && strings.Contains(path, "/webhooks/"):
		return f.webhooks[strings.HasPrefix(path, "/api/")]
	case name == "id" && strings.Contains(path, "/tokens/"):
		if admin {
			return f.tokenForAdmin
		}
		return f.token
	case name == "id" && strings.Contains(path, "/users/"):
		return f.user
	case name == "id" && strings.Contains(path, "/agents/"):
		return f.agent
	case name == "id" && strings.Contains(path, "/models/"):
		return f.model
	case name == "slug":
		return f.hardware
	case name == "page":
		return "metrics"
	case name == "file":
		return "home.png"
	}
	t.Fatalf("%s: no value for the path parameter %q: add one to accessFixture.param", path, name)
	return ""
}

var pathParam = regexp.MustCompile(`:(\w+)(<\w+>)?`)

// TestEveryRouteAnswersEachCallerAsDeclared walks the whole route table
// as anonymous, ada (who owns the resources), bob (another user) and an
// administrator — with a session on pages and a token on the API — and
// checks each answer against the route's declared access: anonymous is
// sent to sign in (401 on the API), another user is told an owner's
// resource does not exist (404), a user is refused administrators' routes
// (403), and those allowed are let through (whatever the empty request
// then gets, never a 5xx). Every route Fiber serves must be in the table.
func TestEveryRouteAnswersEachCallerAsDeclared(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	bob := e.createUser("bob@example.com", "correct horse", store.RoleUser)
	root := e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	carol := e.createUser("carol@example.com", "correct horse", store.RoleUser)
	adaTok := e.token(ada)
	tokens := map[string]string{"ada": adaTok, "bob": e.token(bob), "admin": e.token(root)}
	b, run := runWithResults(t, e, adaTok, 3, func(i int) string { return fmt.Sprint(i) })
	// The run's results signed (as when it ends), for its attestation.
	att, err := e.attest.Signer.Sign(ctx, e.store, run, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.SaveAttestation(ctx, att); err != nil {
		t.Fatal(err)
	}
	var f accessFixture
	f.benchmark, f.run, f.user, f.hardware = b, fmt.Sprint(run), fmt.Sprint(carol.ID), "cpu-2c"
	if err := e.store.Pool().QueryRow(ctx, `SELECT b.dataset_id::text, (SELECT id::text FROM agents LIMIT 1), (SELECT id::text FROM models LIMIT 1)
		FROM benchmarks b WHERE b.id = $1`, b).Scan(&f.dataset, &f.agent, &f.model); err != nil {
		t.Fatal(err)
	}
	fl := e.api(http.MethodPost, "/api/v1/fleets", adaTok, strings.NewReader(`{"name":"access","scenarios":[{"name":"s","dataset":`+f.dataset+
		`,"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}],"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}]}`), "application/json")
	if fl.status != 201 {
		t.Fatalf("fleet: %d %v", fl.status, fl.body)
	}
	f.fleet = fmt.Sprint(fl.body["fleet_id"])
	f.doomed = map[string]string{}
	for i, key := range []string{"false false", "false true", "true false", "true true"} {
		up := e.upload(adaTok, fmt.Sprintf("doomed-%d.jsonl", i), []byte(fmt.Sprintf(`{"prompt":"doomed %d"}`, i)+"\n"), nil)
		f.doomed[key] = fmt.Sprint(up.body["dataset_id"])
	}
	f.doomedBenchmarks = map[string]string{}
	dsID, _ := strconv.ParseInt(f.dataset, 10, 64)
	for _, key := range []string{"false false", "false true", "true false", "true true"} {
		id, err := e.store.CreateBenchmark(ctx, ada.ID, "doomed "+key, dsID, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		f.doomedBenchmarks[key] = fmt.Sprint(id)
	}
	// A second run on the same dataset, for the comparison.
	var customID string
	if err := e.store.Pool().QueryRow(ctx, `SELECT custom_id FROM dataset_items WHERE dataset_id = $1 AND idx = 0`, f.dataset).Scan(&customID); err != nil {
		t.Fatal(err)
	}
	body, ct := multipartBody(t, "out.jsonl", []byte(`{"custom_id":"`+customID+`","output":"0"}`+"\n"), map[string]string{"model": "m/small"})
	imp := e.api(http.MethodPost, "/api/v1/datasets/"+f.dataset+"/imports", adaTok, body, ct)
	if imp.status != 201 {
		t.Fatalf("import: %d %v", imp.status, imp.body)
	}
	f.otherRun = fmt.Sprint(imp.body["run_id"])
	// ada's first token (the one the walk uses) for ada's revoke, a second
	// one for the administrator's.
	if err := e.store.Pool().QueryRow(ctx, `SELECT min(id)::text FROM api_tokens WHERE user_id = $1`, ada.ID).Scan(&f.token); err != nil {
		t.Fatal(err)
	}
	second, err := e.store.CreateAPIToken(ctx, ada.ID, "second", "rk_2nd", []byte("second"))
	if err != nil {
		t.Fatal(err)
	}
	f.tokenForAdmin = fmt.Sprint(second.ID)
	f.webhooks = map[bool]string{}
	for _, api := range []bool{false, true} {
		w, err := e.store.CreateWebhook(ctx, ada.ID, store.NewWebhook{URL: "https://hooks.example.com/ruckus", Secret: "sixteen bytes at least",
			Events: []string{"benchmark.finished"}, Format: "json"})
		if err != nil {
			t.Fatal(err)
		}
		f.webhooks[api] = fmt.Sprint(w.ID)
	}
	sessions := map[string]*client{"anonymous": e.client()}
	for who, email := range map[string]string{"ada": "ada@example.com", "bob": "bob@example.com", "admin": "root@example.com"} {
		c := e.client()
		if res := c.signIn(email, "correct horse"); res.status != 303 {
			t.Fatalf("%s signs in: %d", who, res.status)
		}
		sessions[who] = c
	}
	sessions["anonymous"].get("/signin") // a CSRF token, so POSTs get past it

	// Every route Fiber serves is declared, with its access, in the table.
	declared := map[string]bool{}
	for _, r := range e.routes {
		declared[r.Method+" "+r.Path] = true
	}
	for _, r := range e.app.GetRoutes(true) {
		if !declared[r.Method+" "+r.Path] {
			t.Errorf("%s %s is served but not declared with who may use it", r.Method, r.Path)
		}
	}

	routes := append([]handlers.Route(nil), e.routes...)
	sort.SliceStable(routes, func(i, j int) bool { return destructive(routes[i]) < destructive(routes[j]) })
	checked := 0
	for _, r := range routes {
		if r.Method == http.MethodConnect || r.Method == http.MethodTrace || strings.Contains(r.Path, "*") {
			continue
		}
		api := strings.HasPrefix(r.Path, "/api/")
		for _, caller := range []string{"anonymous", "bob", "ada", "admin"} {
			path := pathParam.ReplaceAllStringFunc(r.Path, func(m string) string {
				return f.param(t, r.Method, r.Path, pathParam.FindStringSubmatch(m)[1], caller)
			})
			if r.Path == "/compare" || r.Path == "/compare/judge" || r.Path == "/api/v1/compare" {
				path += "?runs=" + f.run + "," + f.otherRun
			}
			write := r.Method != http.MethodGet && r.Method != http.MethodHead
			var status int
			var location string
			if api {
				var body io.Reader
				if write {
					body = strings.NewReader("{}")
				}
				req := httptest.NewRequest(r.Method, path, body)
				if write {
					req.Header.Set("Content-Type", "application/json")
				}
				if tok := tokens[caller]; tok != "" {
					req.Header.Set("Authorization", "Bearer "+tok)
				}
				res, err := e.app.Test(req, -1)
				if err != nil {
					t.Fatalf("%s %s as %s: %v", r.Method, path, caller, err)
				}
				res.Body.Close()
				status, location = res.StatusCode, res.Header.Get("Location")
			} else {
				c := sessions[caller]
				var body io.Reader
				if write {
					body = strings.NewReader(url.Values{"_csrf": {c.csrf}}.Encode())
				}
				req := httptest.NewRequest(r.Method, path, body)
				if write {
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				res := c.do(req)
				status, location = res.status, res.header.Get("Location")
			}
			if msg := judge(r.Access, api, caller, status, location); msg != "" {
				t.Errorf("%s %s (%s) as %s: %d %s: %s", r.Method, path, r.Access, caller, status, location, msg)
			}
			checked++
		}
	}
	t.Logf("%d declared routes, %d route × caller checks", len(routes), checked)
	if checked < 4*60 {
		t.Errorf("only %d route × caller checks ran", checked)
	}
}

// destructive orders the walk: reads first, then writes, then routes
// that delete or revoke, so the resources the others need are still
// there, and signing out last of all.
func destructive(r handlers.Route) int {
	switch {
	case r.Path == "/signout":
		return 3
	case r.Method == http.MethodDelete || strings.HasSuffix(r.Path, "/delete") || strings.HasSuffix(r.Path, "/revoke"):
		return 2
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		return 1 // a retry, say, drops the run's results
	}
	return 0
}

// judge says what is wrong with status for caller on a route of access,
// or "" when it is what the declaration promises.
func judge(access handlers.Access, api bool, caller string, status int, location string) string {
	if status >= 500 {
		return "a server error"
	}
	toSignIn := status == 303 && strings.HasPrefix(location, "/signin") || api && status == 401
	refused := toSignIn || status == 401 || status == 403 || status == 404
	switch {
	case access == handlers.Anyone:
		return ""
	case caller == "anonymous":
		if !toSignIn {
			return "anonymous must be sent to sign in (401 on the API)"
		}
	case access == handlers.Admin && caller != "admin":
		if status != 403 {
			return "a user must get 403"
		}
	case access == handlers.Owner && caller == "bob", access == handlers.Self && caller != "ada":
		if status != 404 {
			return "must be told it does not exist (404)"
		}
	case refused:
		return "must be let through"
	}
	return ""
}

// TestSharedBenchmarkIsReadOnlyForOthers walks every route on a benchmark
// or a run as bob, another user, once ada has shared her benchmark: he may
// read all of it (pages, fragments, results, exports, the API) and change
// none of it — every write is refused and nothing changes.
func TestSharedBenchmarkIsReadOnlyForOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	e.createUser("bob@example.com", "correct horse", store.RoleUser)
	adaTok := e.token(ada)
	bobTok := e.token(e.createUser("bob2@example.com", "correct horse", store.RoleUser))
	b, run := runWithResults(t, e, adaTok, 3, func(i int) string { return fmt.Sprint(i) })
	// The run's results signed (as when it ends), for its attestation.
	att, err := e.attest.Signer.Sign(ctx, e.store, run, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.SaveAttestation(ctx, att); err != nil {
		t.Fatal(err)
	}
	if r := e.api(http.MethodPatch, "/api/v1/benchmarks/"+b, adaTok, strings.NewReader(`{"visibility":"shared"}`), "application/json"); r.status != 200 {
		t.Fatalf("share: %d %v", r.status, r.body)
	}
	bob := e.client()
	if res := bob.signIn("bob@example.com", "correct horse"); res.status != 303 {
		t.Fatalf("bob signs in: %d", res.status)
	}
	checked := 0
	for _, r := range e.routes {
		onBenchmark := strings.Contains(r.Path, "/benchmarks/:id") || strings.Contains(r.Path, "/runs/:id")
		if !onBenchmark || r.Access != handlers.Owner || r.Method == http.MethodHead {
			continue
		}
		path := pathParam.ReplaceAllStringFunc(r.Path, func(m string) string {
			switch pathParam.FindStringSubmatch(m)[1] {
			case "idx":
				return "0"
			case "run":
				return fmt.Sprint(run)
			case "id":
				if strings.Contains(r.Path, "/runs/:id") {
					return fmt.Sprint(run)
				}
				return b
			}
			t.Fatalf("%s: no value for %s", r.Path, m)
			return ""
		})
		write := r.Method != http.MethodGet
		var status int
		if strings.HasPrefix(r.Path, "/api/") {
			var body io.Reader
			if write {
				body = strings.NewReader(`{"name":"bob's","visibility":"private","scorer":"exact"}`)
			}
			req := httptest.NewRequest(r.Method, path, body)
			req.Header.Set("Authorization", "Bearer "+bobTok)
			req.Header.Set("Content-Type", "application/json")
			res, err := e.app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			status = res.StatusCode
		} else if write {
			status = bob.post(path, url.Values{"name": {"bob's"}, "visibility": {"private"}, "scorer": {"exact"}}).status
		} else {
			status = bob.get(path).status
		}
		checked++
		switch {
		case status >= 500:
			t.Errorf("%s %s as bob: %d", r.Method, path, status)
		case !write && (status == 401 || status == 403 || status == 404):
			t.Errorf("%s %s as bob: %d, want it readable", r.Method, path, status)
		case write && status != 403 && status != 404 && status != 422:
			t.Errorf("%s %s as bob: %d, want it refused", r.Method, path, status)
		}
	}
	if checked < 20 {
		t.Errorf("only %d routes checked", checked)
	}
	var name, vis, state string
	var deleted bool
	var jobs int
	if err := e.store.Pool().QueryRow(ctx, `SELECT b.name, b.visibility, b.deleted_at IS NOT NULL, r.state,
			(SELECT count(*) FROM river_job WHERE kind <> 'benchmark_run')
		FROM benchmarks b JOIN runs r ON r.benchmark_id = b.id WHERE b.id = $1 AND r.id = $2`, b, run).Scan(&name, &vis, &deleted, &state, &jobs); err != nil {
		t.Fatal(err)
	}
	if name == "bob's" || vis != "shared" || deleted || state != "running" || jobs != 0 {
		t.Errorf("bob changed it: name %q, visibility %s, deleted %v, run %s, %d jobs queued", name, vis, deleted, state, jobs)
	}
}
