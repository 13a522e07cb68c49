package conclude

import (
	"fmt"
	"sort"

	"github.com/ruckus/ruckus/app/store"
)

// HistoryLine is one line of a model's history: its runs of one target
// (runtime, hardware, engine settings) that may be set beside each other
// on criterion c — for speed, latency and cost under one load identity,
// for quality under the one scorer identity the history is drawn under.
type HistoryLine struct {
	Runtime, Hardware, Engine string
	// Load is the load identity key (jobs.LoadIdentity.Key) the line's
	// runs were measured under: "" on a quality line, which load does not
	// divide, and on a run whose load identity was not kept (a line of
	// its own: it is comparable with no other run).
	Load string
	// LoadKept is false on a speed, latency or cost line of a run whose
	// load identity was not kept.
	LoadKept bool
	// Lengths, on a speed, latency or cost line, is set when its target's
	// runs under its load were split by their measured lengths (the
	// leaderboard's rule, LeaderboardLengths): the mean prompt and answer
	// lengths of the line's runs, for the legend to say why it is a line
	// of its own; nil when the load's runs are all one line.
	Lengths *LineLengths
	Rows    []store.LeaderboardRow
}

// LineLengths are the mean prompt and answer lengths, in tokens, of a
// history line's runs.
type LineLengths struct{ In, Out float64 }

// HistorySeries splits a model's history rows (oldest first) into its
// lines on criterion c, in the order each line's first run finished:
// speed, latency and cost are compared only within one load identity
// (groupKey, docs/concepts.md#comparability-and-noise), so a run at
// concurrency 64 after runs at concurrency 1 starts a line of its own
// instead of reading as a change of the target; quality is compared
// within one scorer identity whatever the load. A line is never drawn
// across a change of target or load, so a step along it is the target's
// own (docs/history.md#history-of-a-model). Nor is it drawn between runs
// the leaderboard refuses to rank together: within one load, runs whose
// measured mean prompt or answer lengths are more than jobs.LengthRatio
// apart are lines of their own (splitByLengths).
func HistorySeries(rows []store.LeaderboardRow, c Criterion) []HistoryLine {
	var lines []HistoryLine
	at := map[string]int{}
	for _, r := range rows {
		line := HistoryLine{Runtime: r.Runtime, Hardware: r.Hardware, Engine: r.Engine}
		key := fmt.Sprintf("%s\x00%s\x00%s", r.Runtime, r.Hardware, r.Engine)
		switch {
		case c == Quality:
		case r.Load == "":
			key += fmt.Sprintf("\x00run:%d", r.RunID)
		default:
			line.Load, line.LoadKept = r.Load, true
			key += "\x00l:" + r.Load
		}
		i, ok := at[key]
		if !ok {
			i = len(lines)
			at[key] = i
			lines = append(lines, line)
		}
		lines[i].Rows = append(lines[i].Rows, r)
	}
	if c == Quality {
		return lines
	}
	var out []HistoryLine
	for _, l := range lines {
		out = append(out, splitByLengths(l)...)
	}
	// In the order each line's first run finished, as before the split.
	pos := make(map[int64]int, len(rows))
	for i, r := range rows {
		pos[r.RunID] = i
	}
	sort.SliceStable(out, func(a, b int) bool { return pos[out[a].Rows[0].RunID] < pos[out[b].Rows[0].RunID] })
	return out
}

// splitByLengths splits one target's line under one load as the
// leaderboard ranks such runs (comparableLengths, LeaderboardLengths'
// choice): the largest set of runs every two of which have comparable
// measured lengths is one line, the largest such set of the rest the
// next, and so on; each line of a split names its lengths.
func splitByLengths(l HistoryLine) []HistoryLine {
	if !l.LoadKept || len(l.Rows) < 2 {
		return []HistoryLine{l}
	}
	var out []HistoryLine
	rest := l.Rows
	for len(rest) > 0 {
		lens := make([]store.RunLengths, len(rest))
		for i, r := range rest {
			lens[i] = store.RunLengths{RunID: r.RunID, Model: r.Model, MeanIn: r.MeanIn, MeanOut: r.MeanOut}
		}
		kept := comparableLengths(lens)
		part, next := l, []store.LeaderboardRow(nil)
		part.Rows = nil
		for i, r := range rest {
			if kept[i] {
				part.Rows = append(part.Rows, r)
			} else {
				next = append(next, r)
			}
		}
		if len(part.Rows) == 0 { // no comparable set: cannot happen, never loops
			part.Rows, next = rest, nil
		}
		out = append(out, part)
		rest = next
	}
	if len(out) == 1 {
		return out
	}
	for i := range out {
		var in, o float64
		for _, r := range out[i].Rows {
			in, o = in+r.MeanIn, o+r.MeanOut
		}
		n := float64(len(out[i].Rows))
		out[i].Lengths = &LineLengths{In: in / n, Out: o / n}
	}
	return out
}
