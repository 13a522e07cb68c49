package report

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/ruckus/ruckus/agentd/load"
	"github.com/ruckus/ruckus/jobs"
)

// ETADecay is the decay time of the ETA's averages: a request that came
// back ETADecay ago weighs e⁻¹ (37 %) of one just back, one 30 s ago 5 %.
// The averages are over time, not over a number of requests, so they
// cover the last 10–30 s whatever the pace.
const ETADecay = 10 * time.Second

// Plan is what a run segment sets out to do, as far as its end is
// concerned.
type Plan struct {
	// Items is how many items the segment has to send (the pending ones).
	Items int
	// Load is the run's load profile: its shape paces the ETA, its
	// max_requests and max_duration bound it.
	Load jobs.LoadProfile
	// Before is what earlier segments of a resumed run used of the
	// limits (zero for a fresh run).
	Before load.Progress
}

// ETA estimates when a run segment's load ends from what it sees of the
// segment: each measured request leaving and coming back.
//
// The pace is Little's law: requests in flight ÷ the time one takes.
// The in-flight count comes from the load profile (concurrency N keeps N
// in flight, a constant-rate or Poisson profile sends at its rate), so it
// is known from the first request; the time one request takes (L) is the
// mean latency of the requests that came back, each weighted by how
// recently (ETADecay). So the first answers give the pace at once, where
// remaining ÷ done × elapsed counts the time before them, when nothing
// could have come back, as if the run were that slow. Then:
//
//   - closed loop (sequential, concurrency N): a slot is free when its
//     request in flight has had L, and the unsent items go to the slots
//     as they free up, each taking L: about unsent × L ÷ N + L, but the
//     phase of the slots counted (N requests sent together come back
//     together: the ETA steps down a wave at a time, and is exact between
//     steps at a constant latency).
//   - constant-rate and Poisson: the unsent items leave at the profile's
//     rate, or at what the in-flight cap allows (cap ÷ L) when the
//     runtime cannot keep up: unsent ÷ rate + L. Before any answer L is
//     the age of the oldest request in flight (a lower bound: it has not
//     come back yet), so this profile has an ETA from its first send.
//     And when the runtime answers clearly fewer than the rate, never
//     less than what is left at its recent throughput (answers per
//     second since the first, decayed alike): a runtime falling behind
//     shows there before its latencies tell.
//   - sweep (and any other profile): the mean in flight over the same
//     decaying window stands for N: the ETA is at the present step's
//     pace, and it moves when the next step's pace differs.
//   - all sent: the youngest request in flight still has L − its age.
//
// Evidence that requests take longer than the mean: a request in flight
// for longer than the mean latency counts as one more latency of its
// present age, so the ETA does not count down through a stall but grows
// with it, and a batch whose first answers are its shortest is not taken
// for fast for long. A stall is pace like any other: it weighs on the
// ETA until it is a few decay times old. The requests sent before the
// first answer came back (the first wave, which may pay for a cold
// start) are set aside once as many sent after it have come back.
//
// Limits: max_requests caps the items counted (less what earlier
// segments recorded), and max_duration the time: the ETA is at most the
// time left until the measured window reaches it (less what earlier
// segments measured), plus one latency for the requests still in flight
// then, which finish and are recorded.
//
// No basis, no ETA: before the window starts, and for any profile but a
// rate before the first answer, Estimate reports false ("unknown").
//
// ETA takes every time from its caller (no clock of its own) and is not
// safe for concurrent use.
type ETA struct {
	plan     Plan
	target   int       // requests this segment sends at most
	start    time.Time // measured window start; zero until Start
	deadline time.Time // max_duration reached; zero without one
	at       time.Time // the decaying sums below are as of at

	nextID   uint64
	inflight map[uint64]time.Time // send times of the requests in flight
	sent     int
	ended    int
	firstEnd time.Time // when the first request came back

	// Latencies of the requests sent before the first came back (first)
	// and after (later), weighted by how long ago they came back.
	first, later decayed
	// ∫ in-flight dt and ∫ dt over the window, decayed alike: their ratio
	// is the mean in flight (a sweep's stand-in for N).
	inflightArea, exposure float64
	// Requests back, and ∫ dt since the first came back, decayed alike:
	// their ratio is the recent throughput. Counted from the first answer
	// it is not lowered by the time before it.
	backW, backExposure float64
}

// decayed is a time-decayed sum of latencies.
type decayed struct {
	w  float64 // Σ weights
	wl float64 // Σ weight × latency in seconds
	n  int     // how many, undecayed
}

func (d *decayed) add(lat float64) { d.w++; d.wl += lat; d.n++ }
func (d *decayed) scale(f float64) { d.w *= f; d.wl *= f }

// NewETA returns an estimator for a segment that sets out to do p.
func NewETA(p Plan) *ETA {
	target := max(p.Items, 0)
	if m := p.Load.MaxRequests; m > 0 {
		target = min(target, max(m-p.Before.Requests, 0))
	}
	return &ETA{plan: p, target: target, inflight: map[uint64]time.Time{}}
}

// Start marks the start of the measured window (after warm-up), from
// which max_duration counts.
func (e *ETA) Start(at time.Time) {
	e.start, e.at = at, at
	e.deadline = time.Time{}
	if d := time.Duration(e.plan.Load.MaxDuration); d > 0 {
		e.deadline = at.Add(d - e.plan.Before.Measured)
	}
}

// Sent notes a measured request leaving at now; pass the id it returns
// to Ended when it comes back (answered, failed or cut short).
func (e *ETA) Sent(now time.Time) uint64 {
	if e.start.IsZero() {
		e.Start(now)
	}
	e.advance(now)
	e.nextID++
	e.inflight[e.nextID] = now
	e.sent++
	return e.nextID
}

// Ended notes the request id coming back at now.
func (e *ETA) Ended(id uint64, now time.Time) {
	sentAt, ok := e.inflight[id]
	if !ok {
		return
	}
	e.advance(now)
	delete(e.inflight, id)
	e.ended++
	e.backW++
	if e.firstEnd.IsZero() {
		e.firstEnd = now
	}
	lat := max(now.Sub(sentAt), 0).Seconds()
	if sentAt.Before(e.firstEnd) {
		e.first.add(lat)
	} else {
		e.later.add(lat)
	}
}

// advance decays the sums to now; the in-flight count has been constant
// since e.at.
func (e *ETA) advance(now time.Time) {
	if e.at.IsZero() || !now.After(e.at) {
		return
	}
	dt := now.Sub(e.at).Seconds()
	tau := ETADecay.Seconds()
	f := math.Exp(-dt / tau)
	e.first.scale(f)
	e.later.scale(f)
	e.inflightArea = e.inflightArea*f + float64(len(e.inflight))*tau*(1-f)
	e.exposure = e.exposure*f + tau*(1-f)
	e.backW *= f
	if !e.firstEnd.IsZero() {
		e.backExposure = e.backExposure*f + tau*(1-f)
	}
	e.at = now
}

// Estimate returns the time left until the segment's last request comes
// back, as seen at now; false when there is no basis for one.
func (e *ETA) Estimate(now time.Time) (time.Duration, bool) {
	if e.start.IsZero() {
		return 0, false
	}
	e.advance(now)
	if e.ended >= e.target {
		return 0, true
	}
	oldest, youngest := e.inflightAges(now)
	lat, measured := e.latency(now)
	if !measured && oldest > lat {
		lat = oldest // not back yet: one latency is at least this
	}
	tail := 0.0 // until the requests in flight are back
	if youngest >= 0 {
		tail = max(lat-youngest, 0)
	}
	unsent := float64(max(e.target-e.sent, 0))
	eta, ok := e.remaining(now, lat, measured, tail, unsent)
	if !ok {
		return 0, false
	}
	if !e.deadline.IsZero() {
		left := e.deadline.Sub(now).Seconds()
		limit := tail // past the deadline nothing more is sent
		if left > 0 {
			limit = left + lat // the last request sent before it still takes a latency
		}
		eta = min(eta, limit)
	}
	if math.IsNaN(eta) || math.IsInf(eta, 0) {
		return 0, false
	}
	return time.Duration(max(eta, 0) * float64(time.Second)), true
}

// inflightAges are the ages in seconds of the oldest and the youngest
// request in flight; -1 for both when none is.
func (e *ETA) inflightAges(now time.Time) (oldest, youngest float64) {
	oldest, youngest = -1.0, -1.0
	for _, at := range e.inflight {
		a := max(now.Sub(at), 0).Seconds()
		if oldest < 0 || a > oldest {
			oldest = a
		}
		if youngest < 0 || a < youngest {
			youngest = a
		}
	}
	return oldest, youngest
}

// remaining is the time left in seconds by the load profile's way of
// sending, before any deadline: lat is one request's latency (measured
// or not), tail the time until those in flight are back and unsent the
// requests still to send. False when there is no basis for one.
func (e *ETA) remaining(now time.Time, lat float64, measured bool, tail, unsent float64) (float64, bool) {
	p := e.plan.Load
	switch {
	case !measured && unsent == 0:
		return 0, false // all sent, none back: no latency to go by
	case p.Profile == jobs.LoadConstant || p.Profile == jobs.LoadPoisson:
		return e.openLoop(lat, measured, tail, unsent)
	case p.Profile == jobs.LoadConcurrency || p.Profile == jobs.LoadSequential || p.Profile == "":
		if !measured {
			return 0, false // no request has come back: no pace yet
		}
		left := math.Inf(1)
		if !e.deadline.IsZero() {
			left = e.deadline.Sub(now).Seconds()
		}
		n := 1
		if p.Profile == jobs.LoadConcurrency {
			n = max(p.Concurrency, 1)
		}
		return closedLoop(n, lat, e.ages(now), int(unsent), left), true
	case !measured:
		return 0, false
	case unsent == 0:
		return tail, true
	default:
		// Free slots send at once; the rest wait for requests to come
		// back, N per latency; the last one sent takes a latency.
		slots := e.slots()
		waiting := max(unsent-max(slots-float64(len(e.inflight)), 0), 0)
		return waiting*lat/slots + lat, true
	}
}

// openLoop is the time left for a profile that sends at a rate: the
// unsent at the pace the runtime keeps up with, then one latency.
func (e *ETA) openLoop(lat float64, measured bool, tail, unsent float64) (float64, bool) {
	p := e.plan.Load
	pace := p.Rate
	if !(pace > 0) || math.IsInf(pace, 0) {
		return 0, false
	}
	if measured && lat > 0 {
		cap := float64(load.OpenLoopCeiling)
		if p.Concurrency > 0 {
			cap = float64(p.Concurrency)
		}
		pace = min(pace, cap/lat)
	}
	eta := tail
	if unsent > 0 {
		eta = unsent/pace + lat
	}
	// A runtime that answers fewer than are sent builds a backlog,
	// which the latency of the last answers does not show yet: then
	// what is left takes at least as long as it does at the
	// throughput. Behind means fewer answers than the rate would
	// give by three standard deviations of their count (Poisson), so
	// that a lull in a Poisson profile's sends is not taken for it.
	if want := p.Rate * e.backExposure; e.backW > 0 && e.backW < want-3*math.Sqrt(want) {
		eta = max(eta, float64(e.target-e.ended)*e.backExposure/e.backW)
	}
	return eta, true
}

// closedLoop is how long n slots take to send unsent more requests and
// have every one back, when each takes lat seconds, those in flight have
// the ages given and nothing may leave after left seconds (max_duration):
// a slot is free once its request has had lat (an overdue one may come
// back any moment), the next request goes to the slot free first, and
// the slots keep their order since every request takes the same time. So
// with unsent = q·n + j, the j slots free first send q+1 more and the
// others q — unless the deadline comes first: then each slot sends until
// it. Exact for a constant latency, whatever the phase of the slots (all
// in one wave, or spread out).
func closedLoop(n int, lat float64, ages []float64, unsent int, left float64) float64 {
	free := make([]float64, n) // from now; slots without a request are free now
	for i, a := range ages[:min(len(ages), n)] {
		free[i] = max(lat-a, 0)
	}
	slices.Sort(free)
	// How many each slot can still send before the deadline.
	capacity := 0.0
	for _, f := range free {
		if f < left {
			capacity += math.Ceil((left - f) / lat)
		}
	}
	end := 0.0
	if lat > 0 && capacity <= float64(unsent) {
		for _, f := range free {
			k := 0.0
			if f < left {
				k = math.Ceil((left - f) / lat)
			}
			end = max(end, f+k*lat)
		}
		return end
	}
	q, j := unsent/n, unsent%n
	for i, f := range free {
		k := q
		if i < j {
			k++
		}
		end = max(end, f+float64(k)*lat)
	}
	return end
}

// ages are the ages in seconds of the requests in flight, oldest first.
func (e *ETA) ages(now time.Time) []float64 {
	ages := make([]float64, 0, len(e.inflight))
	for _, at := range e.inflight {
		ages = append(ages, max(now.Sub(at), 0).Seconds())
	}
	slices.SortFunc(ages, func(a, b float64) int { return cmp.Compare(b, a) })
	return ages
}

// slots is how many requests a profile that is not a closed loop keeps in
// flight (a sweep, whose steps differ, or another): the mean in flight
// lately.
func (e *ETA) slots() float64 {
	if e.exposure > 0 {
		return max(e.inflightArea/e.exposure, 1)
	}
	return 1
}

// latency is the time one request takes, in seconds: the decayed mean of
// those that came back, raised by those in flight for longer than it;
// measured is false when none has come back yet (then it is zero).
func (e *ETA) latency(now time.Time) (lat float64, measured bool) {
	d := e.later
	if d.n == 0 || d.n < e.first.n {
		d.w, d.wl, d.n = d.w+e.first.w, d.wl+e.first.wl, d.n+e.first.n
	}
	if d.n == 0 || d.w <= 0 {
		return 0, false
	}
	mean := d.wl / d.w
	w, wl := d.w, d.wl
	for _, at := range e.inflight {
		if a := now.Sub(at).Seconds(); a > mean {
			w, wl = w+1, wl+a
		}
	}
	return wl / w, true
}
