package conclude

import (
	"fmt"

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
	Rows     []store.LeaderboardRow
}

// HistorySeries splits a model's history rows (oldest first) into its
// lines on criterion c, in the order each line's first run finished:
// speed, latency and cost are compared only within one load identity
// (groupKey, docs/concepts.md#comparability-and-noise), so a run at
// concurrency 64 after runs at concurrency 1 starts a line of its own
// instead of reading as a change of the target; quality is compared
// within one scorer identity whatever the load. A line is never drawn
// across a change of target or load, so a step along it is the target's
// own (docs/history.md#history-of-a-model).
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
	return lines
}
