package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/store"
)

// fixtures are what set-up made: the models the users benchmark and the
// GPU hardware profile the --sim-gpu agents present.
type fixtures struct {
	models   []string
	gpu      string // the --sim-gpu agents' profile slug
	archived []int64
	archive  *client // the archivist, whose benchmarks are compared after the restore
	// atBackup: each archived answer's path → the live answer just before
	// and just after the backup.
	atBackup map[string]*[2][]byte
}

// user is one simulated user and what it has made.
type user struct {
	n        int
	c        *client
	rng      *rand.Rand
	datasets []int64
	spare    []int64 // datasets no benchmark uses, to delete
	benches  []int64
	done     []int64 // completed runs
	uploads  int
}

// newUser creates user n (a German speaker every third) with a token,
// signs it in, and subscribes its webhook.
func (d *day) newUser(ctx context.Context, n int, pw *auth.Passwords) (*user, error) {
	email := fmt.Sprintf("user%02d@day.local", n)
	password := "day-password-" + fmt.Sprint(n)
	hash, err := pw.Hash(password)
	if err != nil {
		return nil, err
	}
	u, err := d.st.CreateUser(ctx, store.NewUser{Email: email, Name: fmt.Sprintf("User %d", n), PasswordHash: hash, Role: store.RoleUser})
	if err != nil {
		return nil, err
	}
	token, prefix, th := auth.NewAPIToken()
	if _, err := d.st.CreateAPIToken(ctx, u.ID, "day", prefix, th); err != nil {
		return nil, err
	}
	lang := "en-GB,en;q=0.8"
	if n%3 == 1 {
		lang = "de-DE,de;q=0.9"
	}
	us := &user{n: n, c: d.newClient(email, password, token, lang, fmt.Sprintf("10.0.%d.%d", n/200, n%200+1)), rng: rand.New(rand.NewPCG(uint64(n), 41))}
	if err := us.c.signIn(ctx); err != nil {
		return nil, err
	}
	if strings.HasPrefix(lang, "de") {
		us.c.form(ctx, "language", "/settings/language", url.Values{"language": {"de"}}, http.StatusOK, http.StatusSeeOther)
	}
	secret := benchSecret(n)
	path := fmt.Sprintf("/hook/%d", n)
	d.hooks.register(path, secret)
	events := []string{"benchmark.finished", "benchmark.failed"}
	if st, body := us.c.apiJSON(ctx, "webhook", http.MethodPost, "/api/v1/webhooks",
		map[string]any{"url": d.hooks.url + path, "secret": secret, "events": events, "format": "json"}, http.StatusCreated); st != http.StatusCreated {
		return nil, fmt.Errorf("webhook for %s: %d %s", email, st, trim(body))
	}
	if _, err := us.upload(ctx); err != nil {
		return nil, err
	}
	return us, nil
}

func benchSecret(n int) string { return fmt.Sprintf("day-webhook-secret-%04d", n) }

// datasetLines is a small arithmetic dataset, distinct per user and
// upload (an identical file is refused as a duplicate).
func datasetLines(n, k, items int) []byte {
	var b strings.Builder
	for i := range items {
		fmt.Fprintf(&b, "{\"id\":\"q%03d\",\"prompt\":\"User %d set %d: what is %d plus %d?\",\"reference\":\"%d\"}\n", i, n, k, i, n+k, i+n+k)
	}
	return []byte(b.String())
}

// upload uploads a good dataset through the API.
func (u *user) upload(ctx context.Context) (int64, error) {
	u.uploads++
	body, ctype := multipartBody(map[string]string{"name": fmt.Sprintf("user %d set %d", u.n, u.uploads)}, "set.jsonl", datasetLines(u.n, u.uploads, 12))
	st, b := u.c.expect(ctx, "upload", req{method: http.MethodPost, path: "/api/v1/datasets", body: body, ctype: ctype, api: true}, http.StatusCreated)
	if st != http.StatusCreated {
		return 0, fmt.Errorf("upload: %d %s", st, trim(b))
	}
	var out struct {
		ID int64 `json:"dataset_id"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.ID == 0 {
		return 0, fmt.Errorf("upload answer without an id: %s", trim(b))
	}
	u.datasets = append(u.datasets, out.ID)
	return out.ID, nil
}

// badUploads are files a user gets wrong: each must be refused (4xx),
// never a 5xx.
var badUploads = [][]byte{
	[]byte("{\"custom_id\":\"a\",\"prompt\":\"ok\"}\n{not json\n"),
	[]byte("\x1f\x8b\x08\x00garbage"),
	[]byte(""),
	[]byte("{\"custom_id\":\"a\",\"prompt\":\"nul \\u0000 here\"}\n"),
	[]byte("{\"custom_id\":\"a\"}\n"),
}

// work is one user's day: steps drawn at random until ctx ends.
func (u *user) work(ctx context.Context, d *day, wg *sync.WaitGroup) {
	defer wg.Done()
	steps := []struct {
		weight int
		do     func(context.Context, *day)
	}{
		{6, u.benchmark}, {6, u.browse}, {3, u.poll}, {2, u.uploadStep}, {2, u.badUpload}, {2, u.rescore}, {1, u.judge},
		{1, u.importResults}, {1, u.fleet}, {2, u.compare}, {1, u.capacity}, {3, u.export}, {1, u.deleteStep}, {1, u.settings}, {1, u.cancel},
	}
	total := 0
	for _, s := range steps {
		total += s.weight
	}
	for ctx.Err() == nil {
		pick := u.rng.IntN(total)
		for _, s := range steps {
			if pick < s.weight {
				s.do(ctx, d)
				break
			}
			pick -= s.weight
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(400+u.rng.IntN(1200)) * time.Millisecond):
		}
	}
}

func (u *user) pick(xs []int64) int64 { return xs[u.rng.IntN(len(xs))] }

// loads are every load profile but trace (whose dataset needs arrival
// times): what a benchmark draws its load from.
func loads(rng *rand.Rand) map[string]any {
	switch rng.IntN(5) {
	case 0:
		return map[string]any{"profile": "sequential"}
	case 1:
		return map[string]any{"profile": "concurrency", "concurrency": 3}
	case 2:
		return map[string]any{"profile": "constant-rate", "rate": 20}
	case 3:
		return map[string]any{"profile": "poisson", "rate": 20}
	}
	return map[string]any{"profile": "sweep", "concurrency": 4, "steps": 2}
}

// targets is one or two of the models on the CPU agents, sometimes one on
// the GPU agents.
func (u *user) targets(d *day) []map[string]string {
	ts := []map[string]string{{"model": d.fx.models[0], "runtime": "sim", "hardware": "cpu"}}
	if u.rng.IntN(2) == 0 {
		ts = append(ts, map[string]string{"model": d.fx.models[1], "runtime": "sim", "hardware": "cpu"})
	}
	if d.fx.gpu != "" && u.rng.IntN(4) == 0 {
		ts = append(ts, map[string]string{"model": d.fx.models[1], "runtime": "sim", "hardware": d.fx.gpu})
	}
	return ts
}

// benchmark starts a benchmark of a random load profile, sometimes with
// repeats.
func (u *user) benchmark(ctx context.Context, d *day) {
	m := map[string]any{"name": fmt.Sprintf("user %d bench %d", u.n, len(u.benches)), "dataset": u.pick(u.datasets),
		"targets": u.targets(d), "load": loads(u.rng), "sampling": map[string]any{"max_tokens": 12}, "scorer": "numeric"}
	if u.rng.IntN(4) == 0 {
		m["repeats"] = 2
	}
	st, b := u.c.apiJSON(ctx, "benchmark", http.MethodPost, "/api/v1/benchmarks", m, http.StatusCreated)
	if st != http.StatusCreated {
		return
	}
	var out struct {
		ID int64 `json:"benchmark_id"`
	}
	if json.Unmarshal(b, &out) == nil && out.ID > 0 {
		u.benches = append(u.benches, out.ID)
	}
}

// poll reads one of the user's benchmarks and keeps its completed runs.
func (u *user) poll(ctx context.Context, _ *day) {
	if len(u.benches) == 0 {
		return
	}
	id := u.pick(u.benches)
	st, b := u.c.apiJSON(ctx, "benchmark status", http.MethodGet, fmt.Sprintf("/api/v1/benchmarks/%d", id), nil, http.StatusOK, http.StatusNotFound)
	if st != http.StatusOK {
		return
	}
	var out struct {
		Runs []struct {
			ID    int64  `json:"run_id"`
			State string `json:"state"`
		} `json:"runs"`
	}
	if json.Unmarshal(b, &out) != nil {
		return
	}
	for _, r := range out.Runs {
		if r.State == "completed" && !contains(u.done, r.ID) {
			u.done = append(u.done, r.ID)
		}
	}
}

func contains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
