package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ok2xx is what a step that should work may answer.
var ok2xx = []int{http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent}

// browse reads pages and live fragments as a browser session does.
func (u *user) browse(ctx context.Context, _ *day) {
	pages := []string{"/", "/benchmarks", "/datasets", "/fleets", "/capacity", "/fragments/running", "/fragments/agents", "/benchmarks/active", "/docs"}
	if len(u.benches) > 0 {
		id := u.pick(u.benches)
		pages = append(pages, fmt.Sprintf("/benchmarks/%d", id), fmt.Sprintf("/benchmarks/%d/runs", id), fmt.Sprintf("/benchmarks/%d/verdict", id))
	}
	if len(u.done) > 0 {
		pages = append(pages, fmt.Sprintf("/runs/%d", u.pick(u.done)), fmt.Sprintf("/runs/%d/attestation", u.pick(u.done)))
	}
	if len(u.datasets) > 0 {
		id := u.datasets[0]
		pages = append(pages, fmt.Sprintf("/datasets/%d", id), fmt.Sprintf("/datasets/%d/leaderboard", id))
	}
	for range 3 {
		p := pages[u.rng.IntN(len(pages))]
		// A deleted benchmark's pages are 404: that is right.
		u.c.expect(ctx, "page", req{method: http.MethodGet, path: p}, http.StatusOK, http.StatusNotFound)
	}
}

func (u *user) uploadStep(ctx context.Context, _ *day) {
	if id, err := u.upload(ctx); err == nil && u.rng.IntN(2) == 0 {
		// Some uploads are never used, and deleted later.
		u.datasets = u.datasets[:len(u.datasets)-1]
		u.spare = append(u.spare, id)
	}
}

// badUpload sends a file that must be refused with a 4xx.
func (u *user) badUpload(ctx context.Context, _ *day) {
	f := badUploads[u.rng.IntN(len(badUploads))]
	body, ctype := multipartBody(map[string]string{"name": "broken"}, "broken.jsonl", f)
	st, b := u.c.do(ctx, req{method: http.MethodPost, path: "/api/v1/datasets", body: body, ctype: ctype, api: true})
	// A 5xx is counted with the others; a 2xx or 3xx took a bad file.
	if st != 0 && st < 400 {
		u.c.d.rec.wrong(fmt.Sprintf("bad upload %q accepted: %d %s", trim(f), st, trim(b)))
	}
}

func (u *user) rescore(ctx context.Context, _ *day) {
	if len(u.done) == 0 {
		return
	}
	scorer := []string{"exact", "contains", "numeric"}[u.rng.IntN(3)]
	u.c.apiJSON(ctx, "rescore", http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/score", u.pick(u.done)), map[string]any{"scorer": scorer}, ok2xx...)
}

// judge has a run judged by the simulated judge, alone or against another.
func (u *user) judge(ctx context.Context, d *day) {
	if len(u.done) == 0 {
		return
	}
	body := map[string]any{"judge": map[string]any{"model": d.fx.models[1], "runtime": "sim", "hardware": "cpu", "rubric": "correctness",
		"scale": map[string]int{"min": 1, "max": 10}, "max_tokens": 16, "concurrency": 2}}
	u.c.apiJSON(ctx, "judge", http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/judge", u.pick(u.done)), body, http.StatusCreated, http.StatusUnprocessableEntity)
}

// importResults imports answers made elsewhere onto the first dataset.
func (u *user) importResults(ctx context.Context, d *day) {
	var b strings.Builder
	for i := range 12 {
		fmt.Fprintf(&b, "{\"custom_id\":\"q%03d\",\"output\":\"%d\"}\n", i, i+u.n+1+u.rng.IntN(2))
	}
	body, ctype := multipartBody(map[string]string{"model": d.fx.models[0], "scorer": "numeric", "name": "imported"}, "out.jsonl", []byte(b.String()))
	u.c.expect(ctx, "import", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/datasets/%d/imports", u.datasets[0]), body: body, ctype: ctype, api: true}, http.StatusCreated)
}

// fleet submits a fleet in Ruckus's dialect (YAML) or the fleet
// document's (JSON).
func (u *user) fleet(ctx context.Context, d *day) {
	k := u.rng.IntN(1_000_000)
	if u.rng.IntN(2) == 0 {
		y := fmt.Sprintf("name: user-%d-fleet-%d\nscenarios:\n  - name: seq\n    dataset: %d\n    load: {profile: sequential}\n    sampling: {max_tokens: 12}\n    scorer: numeric\n"+
			"  - name: conc\n    dataset: %d\n    load: {profile: concurrency, concurrency: 2, max_requests: 6}\n    sampling: {max_tokens: 12}\n    scorer: numeric\n"+
			"targets:\n  - {model: %s, runtime: sim, hardware: cpu}\n", u.n, k, u.datasets[0], u.pick(u.datasets), d.fx.models[0])
		u.c.expect(ctx, "fleet (ruckus)", req{method: http.MethodPost, path: "/api/v1/fleets", body: strings.NewReader(y), ctype: "application/yaml", api: true}, http.StatusCreated)
		return
	}
	doc := map[string]any{"fleet_id": fmt.Sprintf("user-%d-doc-%d", u.n, k), "version": "1.0",
		"repositories":      []map[string]any{{"repo_id": "day", "path": ".", "adapter": "native", "scenarios": []string{"arith"}}},
		"providers":         []any{map[string]string{"model": d.fx.models[1], "runtime": "sim", "hardware": "cpu"}},
		"scenario_profiles": map[string]any{"arith": map[string]any{"dataset": fmt.Sprintf("user %d set 1", u.n), "concurrency": 2, "num_examples": 6}}}
	u.c.apiJSON(ctx, "fleet (document)", http.MethodPost, "/api/v1/fleets", doc, http.StatusCreated)
}

func (u *user) compare(ctx context.Context, _ *day) {
	if len(u.done) < 2 {
		return
	}
	a, b := u.pick(u.done), u.pick(u.done)
	path := fmt.Sprintf("/compare?runs=%d,%d", a, b)
	if u.rng.IntN(2) == 0 {
		u.c.apiJSON(ctx, "compare", http.MethodGet, "/api/v1"+path, nil, http.StatusOK, http.StatusUnprocessableEntity, http.StatusNotFound)
		return
	}
	u.c.expect(ctx, "compare page", req{method: http.MethodGet, path: path}, http.StatusOK, http.StatusUnprocessableEntity, http.StatusNotFound)
}

func (u *user) capacity(ctx context.Context, _ *day) {
	body := map[string]any{"dataset_id": u.datasets[0], "traffic": map[string]float64{"peak_rps": 4, "average_rps": 2, "input_tokens": 60, "output_tokens": 12},
		"slo": map[string]float64{"ttft_ms": 2000, "tpot_ms": 200, "e2e_ms": 10000, "goodput": 0.9}, "headroom": 0.2,
		"costs": map[string]float64{"hours_per_month": 730, "utilisation": 0.5}}
	u.c.apiJSON(ctx, "capacity", http.MethodPost, "/api/v1/capacity", body, http.StatusOK, http.StatusUnprocessableEntity)
	u.c.expect(ctx, "capacity page", req{method: http.MethodGet, path: "/capacity"}, http.StatusOK)
}

// export downloads a benchmark's CSV or summary, a run's results or its
// attestation.
func (u *user) export(ctx context.Context, _ *day) {
	if len(u.done) == 0 || len(u.benches) == 0 {
		return
	}
	paths := []string{fmt.Sprintf("/api/v1/benchmarks/%d/export", u.pick(u.benches)), fmt.Sprintf("/api/v1/benchmarks/%d/summary", u.pick(u.benches)),
		fmt.Sprintf("/api/v1/runs/%d/results?format=jsonl", u.pick(u.done)), fmt.Sprintf("/api/v1/runs/%d/attestation", u.pick(u.done)),
		fmt.Sprintf("/api/v1/benchmarks/%d/verdict", u.pick(u.benches))}
	u.c.apiJSON(ctx, "export", http.MethodGet, paths[u.rng.IntN(len(paths))], nil, http.StatusOK, http.StatusNotFound, http.StatusConflict)
}

// deleteStep deletes an unused dataset, or an old benchmark.
func (u *user) deleteStep(ctx context.Context, _ *day) {
	if len(u.spare) > 0 {
		id := u.spare[0]
		u.spare = u.spare[1:]
		u.c.apiJSON(ctx, "delete dataset", http.MethodDelete, fmt.Sprintf("/api/v1/datasets/%d", id), nil, ok2xx...)
		return
	}
	if len(u.benches) > 4 {
		id := u.benches[0]
		st, _ := u.c.apiJSON(ctx, "delete benchmark", http.MethodDelete, fmt.Sprintf("/api/v1/benchmarks/%d", id), nil, append(ok2xx, http.StatusConflict)...)
		if st >= 200 && st < 300 {
			u.benches = u.benches[1:]
			u.done = nil // their runs may be gone; polling finds the rest again
		}
	}
}

// settings makes a token from the Settings page.
func (u *user) settings(ctx context.Context, _ *day) {
	u.c.expect(ctx, "settings page", req{method: http.MethodGet, path: "/settings"}, http.StatusOK)
	u.c.form(ctx, "new token", "/settings/tokens", url.Values{"name": {fmt.Sprintf("ci %d", u.rng.IntN(1000))}}, http.StatusOK)
}

// cancel cancels one of the user's benchmarks (finished ones answer 409).
func (u *user) cancel(ctx context.Context, _ *day) {
	if len(u.benches) == 0 || u.rng.IntN(3) != 0 {
		return
	}
	u.c.apiJSON(ctx, "cancel", http.MethodPost, fmt.Sprintf("/api/v1/benchmarks/%d/cancel", u.benches[len(u.benches)-1]), nil, append(ok2xx, http.StatusConflict)...)
}
