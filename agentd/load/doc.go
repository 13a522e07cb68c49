// Package load is agentd's load generator. It decides when each of a run's
// requests is sent, so that the figures a benchmark reports (latency under
// a given concurrency or offered rate, the highest throughput) mean what
// the load profile says (docs/benchmarks.md#load-profiles), while the
// caller decides how a request is sent and where its record goes.
//
// Run takes the items still to send (a resumed run passes only the
// remaining ones), a jobs.LoadProfile and two functions: Send, which sends
// one item and returns its jobs.Result, and Record, which receives every
// measured result.
//
// Profiles:
//
//   - sequential: one request at a time.
//   - concurrency N: N workers in a closed loop; the next request leaves
//     when one finishes.
//   - constant-rate R and poisson R: an open loop that sends on a schedule
//     whatever the answers — every 1/R s, or with exponential gaps of mean
//     1/R s drawn from a source seeded with Config.Seed, so a seed always
//     gives the same schedule. The schedule is absolute: a send that was
//     held up is made as soon as possible and the following ones keep
//     their times, so the offered rate is kept over the window where the
//     runtime allows it. Requests in flight are capped at the profile's
//     Concurrency, or OpenLoopCeiling when it has none; every send the cap
//     held back is counted in Outcome.CapDelays, because the offered rate
//     was then not achieved.
//   - sweep: the items are split into 2+Steps consecutive shares of equal
//     size (the first shares take one more item when they do not divide
//     evenly) sent in turn: "sequential"; "max", a closed loop at the
//     profile's Concurrency (DefaultSweepConcurrency when unset); then
//     Steps constant rates evenly spaced strictly between the two rates
//     just measured (both ends are already measured), each capped at the
//     max step's concurrency. Each step starts when the previous one has
//     finished, so their windows do not overlap; Result.Phase names the
//     step ("sequential", "max", "rate 2.50/s").
//
// Warm-up: LoadProfile.Warmup requests go first, reusing the first items
// cyclically, one at a time (at N in flight for the concurrency profile).
// Their results are dropped; the measured window starts when the last of
// them has finished, and every Result.StartOffset is taken from that start
// on the monotonic clock.
//
// Limits, counted in the measured window only: MaxRequests sends only the
// first MaxRequests items, so it is never exceeded. MaxDuration stops
// sending when that long has passed since the window started (no request
// is sent at or after the deadline); requests in flight finish and are
// recorded. MaxErrors stops sending once more than MaxErrors recorded
// results have failed; a failure is counted before its slot is freed, so
// at most the other requests then in flight (concurrency − 1 for a closed
// loop, the cap − 1 for an open one) finish after it and may add errors.
// A resumed run can pass what earlier segments used (Config.Done) so the
// limits hold over the whole run.
//
// Stopping: cancelling ctx stops sending at once and cancels the requests
// in flight (Send gets ctx); a failed result that comes back after ctx has
// ended is taken as cut short by the cancellation and is not recorded, so
// whoever resumes the run sends the item again. Closing Config.Drain stops
// sending gracefully instead: requests in flight finish and are recorded
// (agentd drains on SIGTERM and hands the run back).
package load
