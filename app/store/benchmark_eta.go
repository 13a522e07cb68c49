package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/jobs"
)

// A benchmark's progress and ETA, as the API (list and detail) and the
// benchmark page show them: EstimateBenchmark is the one definition,
// fed by ListBenchmarkStatuses.

// PercentDone is completed of total as a whole per cent, rounded down
// (100 only when every request is done); 0 when there is nothing to do.
func PercentDone(completed, total int64) int {
	if total <= 0 {
		return 0
	}
	return int(min(max(completed, 0)*100/total, 100))
}

// BenchmarkEstimate is a benchmark's status, progress and time left.
type BenchmarkEstimate struct {
	// Status is aggregated over the runs (BenchmarkStatus).
	Status string
	// Progress is PercentDone over all runs' requests.
	Progress int
	// ETASeconds is the time until the last run should finish, rounded up
	// to whole seconds; 0 once the benchmark has finished; nil when it
	// cannot be estimated, and then ETAReason says why.
	ETASeconds *int64
	ETAReason  string
}

// RunTiming is what the estimate reads of one run of the benchmark.
type RunTiming struct {
	ID       int64
	State    string
	ModelID  int64
	Runtime  string
	Hardware string
	// Total and Completed are its requests.
	Total     int64
	Completed int64
	// ETASeconds is a running run's own estimate (its agent's,
	// agentd/report/eta.go); nil when it has none yet.
	ETASeconds *float64
	// Elapsed is how long a running run has run; Duration how long a
	// completed run took from its start to its end. Seconds, by the
	// database's clock; 0 when not known.
	Elapsed  float64
	Duration float64
}

func (r RunTiming) queue() string { return jobs.Queue(r.Hardware, r.Runtime) }

func (r RunTiming) target() Target {
	return Target{ModelID: r.ModelID, Runtime: r.Runtime, Hardware: r.Hardware}
}

// Target is a model on a runtime on a hardware profile.
type Target struct {
	ModelID  int64
	Runtime  string
	Hardware string
}

// EstimateFacts is what the estimate reads beyond the benchmark's runs.
type EstimateFacts struct {
	// Agents is how many live agents serve each queue (CountServingAgents'
	// rule); a queue that is absent has none.
	Agents map[string]int
	// TargetPace is the mean seconds per request of a target's latest
	// completed runs in the benchmarks its owner may read; absent when
	// there are none.
	TargetPace map[Target]float64
}

// EstimateBenchmark is a benchmark's status, progress and ETA from its
// runs (in run order). The ETA of an active benchmark:
//
//   - a running run ends after its own ETA;
//   - a queued run takes its requests × a measured time per request: that
//     of this benchmark's completed runs on the same queue, else of its
//     running runs there (their time so far plus their ETA), else of the
//     same target's latest completed runs in other benchmarks, else of
//     this benchmark's completed or running runs on any queue;
//   - each queue's runs are dealt out, in run order, to the live agents
//     serving it (one run at a time each: agentd's worker count), after
//     the running runs holding them.
//
// It is the latest of those ends. Work of other benchmarks in the same
// queues is not counted. No estimate, with the reason, when a queued run's
// queue has no live agent, or no run gives a time per request.
func EstimateBenchmark(runs []RunTiming, f EstimateFacts) BenchmarkEstimate {
	states := make([]string, len(runs))
	var completed, total int64
	for i, r := range runs {
		states[i] = r.State
		completed += r.Completed
		total += r.Total
	}
	e := BenchmarkEstimate{Status: BenchmarkStatus(states), Progress: PercentDone(completed, total)}
	if e.Status != BenchmarkQueued && e.Status != BenchmarkRunning {
		var zero int64
		e.ETASeconds = &zero
		return e
	}
	if len(runs) == 0 {
		e.ETAReason = "the benchmark has no runs"
		return e
	}
	queues, active := activeByQueue(runs)
	if q, ok := unservedQueue(queues, active, f); ok {
		e.ETAReason = fmt.Sprintf("no agent serves queue %s", q)
		return e
	}
	var end float64
	for _, q := range queues {
		qend, reason := queueEnd(runs, active[q], f.Agents[q], f)
		if reason != "" {
			e.ETAReason = reason
			return e
		}
		end = max(end, qend)
	}
	if math.IsNaN(end) || math.IsInf(end, 0) || end < 0 || end >= math.MaxInt32 {
		e.ETAReason = "the estimate is out of range"
		return e
	}
	eta := int64(math.Ceil(end))
	e.ETASeconds = &eta
	return e
}

// activeByQueue returns the queues of the active (queued or running)
// runs in the order of their first run, and each queue's active runs.
func activeByQueue(runs []RunTiming) ([]string, map[string][]RunTiming) {
	var queues []string
	active := map[string][]RunTiming{}
	for _, r := range runs {
		if r.State != "queued" && r.State != "running" {
			continue
		}
		q := r.queue()
		if _, ok := active[q]; !ok {
			queues = append(queues, q)
		}
		active[q] = append(active[q], r)
	}
	return queues, active
}

// unservedQueue is the first queue with a queued run and no live agent.
func unservedQueue(queues []string, active map[string][]RunTiming, f EstimateFacts) (string, bool) {
	for _, q := range queues {
		if f.Agents[q] > 0 {
			continue
		}
		for _, r := range active[q] {
			if r.State == "queued" {
				return q, true
			}
		}
	}
	return "", false
}

// queueEnd is when a queue's active runs end, in seconds from now, with
// agents live agents serving it; or why that cannot be told.
func queueEnd(runs, active []RunTiming, agents int, f EstimateFacts) (float64, string) {
	var busy []float64 // the running runs' time left, the agents they hold
	var waiting []float64
	for _, r := range active {
		if r.State == "running" && validSeconds(r.ETASeconds) {
			busy = append(busy, *r.ETASeconds)
			continue
		}
		pace, ok := runPace(runs, r, f)
		switch {
		case !ok && r.State == "running":
			return 0, fmt.Sprintf("run %d has no ETA yet and no run of this benchmark has finished to time it", r.ID)
		case !ok:
			return 0, "no run of this benchmark has finished yet to time one"
		case r.State == "running":
			busy = append(busy, pace*float64(max(r.Total-r.Completed, 0)))
		default:
			waiting = append(waiting, pace*float64(max(r.Total, 0)))
		}
	}
	var end float64
	slices.SortFunc(busy, func(a, b float64) int { return cmp.Compare(b, a) })
	free := make([]float64, agents)
	for i, left := range busy {
		end = max(end, left)
		// An agent that went stale still holds its run; more runs
		// running than live agents hold none of the free ones.
		if i < len(free) {
			free[i] = left
		}
	}
	for _, took := range waiting {
		i := slices.Index(free, slices.Min(free))
		free[i] += took
		end = max(end, free[i])
	}
	return end, ""
}

// runPace is the measured seconds per request for run r, from the
// sources EstimateBenchmark lists, in its order.
func runPace(runs []RunTiming, r RunTiming, f EstimateFacts) (float64, bool) {
	sameQueue := func(o RunTiming) bool { return o.queue() == r.queue() }
	anyQueue := func(RunTiming) bool { return true }
	if p, ok := meanPace(runs, sameQueue, completedPace); ok {
		return p, true
	}
	if p, ok := meanPace(runs, sameQueue, runningPace); ok {
		return p, true
	}
	if p, ok := f.TargetPace[r.target()]; ok && p > 0 && !math.IsInf(p, 0) {
		return p, true
	}
	if p, ok := meanPace(runs, anyQueue, completedPace); ok {
		return p, true
	}
	return meanPace(runs, anyQueue, runningPace)
}

// completedPace is a completed run's seconds per request.
func completedPace(o RunTiming) (float64, bool) {
	if o.State != "completed" || o.Duration <= 0 || o.Total <= 0 {
		return 0, false
	}
	return o.Duration / float64(o.Total), true
}

// runningPace is a running run's projected seconds per request: its time
// so far and its ETA over its requests.
func runningPace(o RunTiming) (float64, bool) {
	if o.State != "running" || !validSeconds(o.ETASeconds) || o.Total <= 0 || o.Elapsed+*o.ETASeconds <= 0 {
		return 0, false
	}
	return (o.Elapsed + *o.ETASeconds) / float64(o.Total), true
}

func meanPace(runs []RunTiming, keep func(RunTiming) bool, pace func(RunTiming) (float64, bool)) (float64, bool) {
	var sum float64
	n := 0
	for _, o := range runs {
		if !keep(o) {
			continue
		}
		if p, ok := pace(o); ok {
			sum += p
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

func validSeconds(s *float64) bool {
	return s != nil && !math.IsNaN(*s) && !math.IsInf(*s, 0) && *s >= 0
}

// paceRuns is how many of a target's latest completed runs time it.
const paceRuns = 20

// ownerTarget is a target's pace as one owner may read it.
type ownerTarget struct {
	owner int64
	Target
}

// estimateFacts reads what EstimateBenchmark needs beyond the runs of the
// given benchmarks, for their active runs: the live agents serving their
// queues (as CountServingAgents counts them, heartbeating within
// staleAfter) and each target's pace over its latest completed runs in
// the benchmarks the owner may read (own and shared ones), by owner.
func (q *Queries) estimateFacts(ctx context.Context, rows []BenchmarkStatusRow, staleAfter time.Duration) (map[string]int, map[ownerTarget]float64, error) {
	agentsByQueue, paces := map[string]int{}, map[ownerTarget]float64{}
	var owners, models []int64
	var runtimes, hardware []string
	seen := map[ownerTarget]bool{}
	for _, b := range rows {
		for _, r := range b.timings {
			if r.State != "queued" && r.State != "running" {
				continue
			}
			key := ownerTarget{owner: b.OwnerID, Target: r.target()}
			if seen[key] {
				continue
			}
			seen[key] = true
			owners, models = append(owners, b.OwnerID), append(models, r.ModelID)
			runtimes, hardware = append(runtimes, r.Runtime), append(hardware, r.Hardware)
		}
	}
	if len(owners) == 0 {
		return agentsByQueue, paces, nil
	}
	// One row per (owner, target): the work is bounded by the page's
	// active runs, and each target's pace reads its latest runs through
	// runs_target_idx.
	res, _ := q.db.Query(ctx, `SELECT t.owner, t.model, t.rt, t.hw,
			(SELECT count(*) FROM agents a WHERE a.hardware_profile = t.hw AND t.rt = ANY (a.runtimes)
				AND a.protocol_version = @protocol AND a.state = 'online' AND NOT a.drained AND a.deactivated_at IS NULL
				AND a.last_heartbeat_at > now() - @stale::interval)::int,
			(SELECT avg(x.secs / x.total)::float8 FROM (
				SELECT extract(epoch FROM r.finished_at - r.started_at)::float8 AS secs, r.total
				FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
				WHERE r.model_id = t.model AND r.runtime = t.rt AND r.hardware_profile = t.hw AND r.state = 'completed'
					AND r.total > 0 AND r.finished_at > r.started_at
					AND (b.owner_id = t.owner OR b.visibility = 'shared') AND b.deleted_at IS NULL
				ORDER BY r.finished_at DESC LIMIT @pace_runs) x)
		FROM unnest(@owners::bigint[], @models::bigint[], @runtimes::text[], @hardware::text[]) AS t(owner, model, rt, hw)`,
		pgx.NamedArgs{"owners": owners, "models": models, "runtimes": runtimes, "hardware": hardware,
			"protocol": jobs.ProtocolVersion, "stale": staleAfter, "pace_runs": paceRuns})
	_, err := pgx.CollectRows(res, func(row pgx.CollectableRow) (struct{}, error) {
		var t ownerTarget
		var agents int
		var pace *float64
		if err := row.Scan(&t.owner, &t.ModelID, &t.Runtime, &t.Hardware, &agents, &pace); err != nil {
			return struct{}{}, err
		}
		agentsByQueue[jobs.Queue(t.Hardware, t.Runtime)] = agents
		if pace != nil {
			paces[t] = *pace
		}
		return struct{}{}, nil
	})
	return agentsByQueue, paces, mapErr(err, "benchmark estimate facts")
}
