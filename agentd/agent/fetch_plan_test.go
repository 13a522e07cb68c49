package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// An agent's fetch of its next job reads the available jobs of its queue
// by index however many finished jobs the queue keeps: under row-level
// security PostgreSQL cannot use River's own fetching index for it
// (equality on the job-state enum is not leakproof), so migration 0021
// adds one the agent's fetch can use.
func TestAgentFetchReadsOnlyAvailableJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	url, _ := pgtest.AgentLogin(t, pool, "fetcher")
	a := connectAs(t, url, "")
	testkit.Agent(ctx, t, a.Store, &testkit.AgentOpts{Name: "fetcher"})
	queue := jobs.Queue("cpu", "sim")
	// A day of finished jobs on the agent's queue, and two waiting.
	if _, err := pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, finalized_at, attempt)
		SELECT '{}', 'benchmark_run', 5, $1, 'completed', now(), 1 FROM generate_series(1, 5000)`, queue); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state)
		SELECT '{}', 'benchmark_run', 5, $1, 'available' FROM generate_series(1, 2)`, queue); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE river_job`); err != nil {
		t.Fatal(err)
	}
	// River's fetch (JobGetAvailable), as the agent sends it.
	var plan []byte
	err := a.db.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM river_job
		WHERE state = 'available' AND queue = $1 AND kind = ANY($2) AND scheduled_at <= now()
		ORDER BY priority, scheduled_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`, queue, []string{"benchmark_run"}).Scan(&plan)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &nodes); err != nil || len(nodes) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	var scans []string
	rowsRead := 0
	nodes[0].Plan.walk(func(n planNode) {
		if strings.Contains(n.Type, "Scan") && n.Relation == "river_job" {
			scans = append(scans, n.Type+" "+n.Index)
			rowsRead += n.Rows + n.Removed
		}
	})
	if len(scans) != 1 || !strings.Contains(scans[0], "ruckus_river_job_available_idx") {
		t.Fatalf("the agent's fetch scans river_job by %v, want ruckus_river_job_available_idx\n%s", scans, plan)
	}
	if rowsRead > 2 {
		t.Fatalf("the agent's fetch read %d job rows to find 1 of 2 available among 5,000 finished\n%s", rowsRead, plan)
	}
}

// planNode is the part of an EXPLAIN (FORMAT JSON) node the test reads.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Rows     int        `json:"Actual Rows"`
	Removed  int        `json:"Rows Removed by Filter"`
	Plans    []planNode `json:"Plans"`
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}
