package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
)

// agentSpec is one agent: the GPU it presents (so its hardware profile),
// how much faster its sim is than the base one, and its price.
type agentSpec struct {
	name, gpu, profile string
	speedup, price     float64
	index              int
}

// The agents: base serves the A/A pairs and every pair's A; twin is as
// fast at twice the price; fast10 and fast25 have B's planted speed-ups.
func agentSpecs() []*agentSpec {
	return []*agentSpec{
		{name: "verdict-base", gpu: "NVIDIA L4:24:1", profile: "l4-24gb-x1", speedup: 1, price: 1, index: 0},
		{name: "verdict-twin", gpu: "NVIDIA A10:24:1", profile: "a10-24gb-x1", speedup: 1, price: 2, index: 1},
		{name: "verdict-fast10", gpu: "NVIDIA L40S:48:1", profile: "l40s-48gb-x1", speedup: 1.10, price: 1, index: 2},
		{name: "verdict-fast25", gpu: "NVIDIA H100:80:1", profile: "h100-80gb-x1", speedup: 1.25, price: 1, index: 3},
	}
}

// cluster is the server and the agents this bench started.
type cluster struct {
	o        options
	dbURL    string
	dir      string
	server   *benchkit.Server
	api      *client
	mu       sync.Mutex
	agents   map[string]*benchkit.Proc
	urls     map[string]string // agent name → its DATABASE_URL
	simDrift bool              // agentd has --sim-drift
	sigma    float64           // the phase's TTFT σ
	restarts int
	// tag sets the agents' names apart from another bench's on the same
	// cluster (their PostgreSQL roles are the cluster's).
	tag string
}

// login is agent a's name on the server.
func (c *cluster) login(a *agentSpec) string { return a.name + "-" + c.tag }

const (
	adminEmail    = "admin@verdict.local"
	adminPassword = "verdict-admin-pw"
)

// startCluster migrates the database, starts the server, makes an API
// token and creates the agents' logins with the admin CLI.
func startCluster(ctx context.Context, o options, dbURL string) (*cluster, error) {
	dir, err := os.MkdirTemp("", "ruckus-verdict-")
	if err != nil {
		return nil, err
	}
	c := &cluster{o: o, dbURL: dbURL, dir: dir, agents: map[string]*benchkit.Proc{}, urls: map[string]string{}, tag: benchkit.RandomHex(3)}
	if _, err := c.cli("migrate", "up"); err != nil {
		return c, err
	}
	// A metrics listener of its own: the default port may be another
	// server's on a shared machine.
	metrics, err := benchkit.FreeAddr()
	if err != nil {
		return c, err
	}
	c.server, err = benchkit.StartServer(ctx, o.ruckus, "DATABASE_URL="+dbURL, "RUCKUS_METRICS_ADDR="+metrics, "RUCKUS_ADMIN_EMAIL="+adminEmail,
		"RUCKUS_ADMIN_PASSWORD="+adminPassword, "RUCKUS_AGENT_STALE_AFTER=20s")
	if err != nil {
		return c, err
	}
	token, err := c.cli("token", "create", "--email", adminEmail, "--name", "bench-verdict")
	if err != nil {
		return c, err
	}
	lines := strings.Fields(token)
	if len(lines) == 0 {
		return c, fmt.Errorf("ruckus token create printed nothing")
	}
	c.api = &client{base: c.server.Base, token: lines[len(lines)-1]}
	help, _ := exec.Command(o.agentd, "run", "--help").CombinedOutput()
	c.simDrift = !o.restartDrift && bytes.Contains(help, []byte("-sim-drift"))
	for _, a := range agentSpecs() {
		out, err := c.cli("agent", "create", c.login(a), "--runtime", "sim", "--hardware", a.profile, "--key-file", filepath.Join(dir, a.name+".key"))
		if err != nil {
			return c, err
		}
		_, rest, ok := strings.Cut(out, "DATABASE_URL='")
		u, _, ok2 := strings.Cut(rest, "'")
		if !ok || !ok2 {
			return c, fmt.Errorf("ruckus agent create %s: no DATABASE_URL in %q", a.name, out)
		}
		c.urls[a.name] = u
	}
	return c, nil
}

// cli runs one admin command of the ruckus binary on the database.
func (c *cluster) cli(args ...string) (string, error) {
	cmd := exec.Command(c.o.ruckus, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+c.dbURL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ruckus %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// startAgent (re)starts agent a with the phase's sim settings. level
// scales its latencies: the drift level an agentd without --sim-drift is
// given at each restart.
func (c *cluster) startAgent(ctx context.Context, a *agentSpec, level float64) error {
	c.mu.Lock()
	old := c.agents[a.name]
	c.restarts++
	seed := c.o.seed*1000 + uint64(a.index)*100 + uint64(c.restarts)
	c.mu.Unlock()
	if old != nil {
		_ = old.Stop(15 * time.Second)
	}
	args := []string{"run", "--name", c.login(a), "--key-file", filepath.Join(c.dir, a.name+".key"), "--runtime", "sim", "--no-gpu",
		"--heartbeat", "1s", "--sim-gpu", a.gpu, "--sim-ttft", fmt.Sprintf("lognormal:20ms,%g", c.sigma), "--sim-itl", "lognormal:2ms,0.3",
		"--sim-output-tokens", "normal:48,8", "--sim-batch", "1000000", "--sim-seed", strconv.FormatUint(seed, 10),
		"--sim-time-scale", strconv.FormatFloat(level/a.speedup, 'g', 6, 64)}
	if c.simDrift && c.o.simDrift > 0 {
		args = append(args, "--sim-drift", strconv.FormatFloat(c.o.simDrift, 'g', 6, 64), "--sim-drift-period", c.o.driftPeriod.String())
	}
	p, err := benchkit.Start(benchkit.Spec{Name: a.name, Argv: append([]string{c.o.agentd}, args...), Env: []string{"DATABASE_URL=" + c.urls[a.name]}, OwnGroup: true})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.agents[a.name] = p
	c.mu.Unlock()
	return benchkit.WaitFor(ctx, p, c.o.timeout, 100*time.Millisecond, a.name+" online", func() (bool, error) {
		var list struct {
			Agents []struct {
				Name, State string
			} `json:"agents"`
		}
		if err := c.api.get(ctx, "/api/v1/agents", &list); err != nil {
			return false, err
		}
		for _, x := range list.Agents {
			if x.Name == c.login(a) && x.State == "online" {
				return true, nil
			}
		}
		return false, nil
	})
}

// driftLevel is the level an agentd without --sim-drift is restarted
// with before benchmark k: exp(σ·z), z drawn from the seed and k.
func (c *cluster) driftLevel(a *agentSpec, k int) float64 {
	if c.simDrift || c.o.simDrift == 0 {
		return 1
	}
	r := rand.New(rand.NewPCG(c.o.seed^0xd21f7, uint64(k)*8+uint64(a.index)))
	return math.Exp(c.o.simDrift * r.NormFloat64())
}

// stop ends the agents, then the server.
func (c *cluster) stop() {
	c.mu.Lock()
	var ps []*benchkit.Proc
	for _, p := range c.agents {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	benchkit.StopAll(ps, 15*time.Second)
	if c.server != nil {
		_ = c.server.Stop(15 * time.Second)
	}
	_ = os.RemoveAll(c.dir)
}

// burner takes share of one core while on and is switched on or off at
// random (seeded) every period, until ctx ends: a neighbour whose load
// comes and goes between runs. It returns how many periods it was on.
func burner(ctx context.Context, share float64, period time.Duration, seed uint64) func() (on, periods int) {
	done := make(chan struct{})
	var on, periods int
	go func() {
		defer close(done)
		r := rand.New(rand.NewPCG(seed, 0xb0a7))
		for ctx.Err() == nil {
			burning := share > 0 && r.IntN(2) == 1
			periods++
			if burning {
				on++
			}
			end := time.Now().Add(period)
			for time.Now().Before(end) && ctx.Err() == nil {
				slot := time.Now().Add(10 * time.Millisecond)
				if burning {
					for busy := time.Now().Add(time.Duration(share * float64(10*time.Millisecond))); time.Now().Before(busy); {
					}
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Until(slot)):
				}
			}
		}
	}()
	return func() (int, int) { <-done; return on, periods }
}
