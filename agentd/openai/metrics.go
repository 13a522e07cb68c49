package openai

import (
	"time"

	"github.com/ruckus/ruckus/app/stats"
)

// contentEvent is one event that carried generated content: when it
// arrived and how many bytes of text it carried (the weight by which the
// run's tokens are shared out among events).
type contentEvent struct {
	at    time.Time
	chars int
}

// metrics are one request's timings.
type metrics struct {
	TTFT, E2E, TPOT                 time.Duration
	ITLMean, ITLP50, ITLP99, ITLMax time.Duration
}

// compute derives a request's timings (DESIGN.md § Metric definitions):
//   - TTFT: send → first event carrying generated content (a role-only
//     first chunk carries none and does not count);
//   - E2E: send → last content event, or → end when none came;
//   - TPOT: (E2E − TTFT) / (tokens − 1), zero with fewer than two tokens;
//   - ITL: the gap before each content event after the first, split evenly
//     among the tokens that event carries. How many tokens an event
//     carries is known only in total (usage), so tokens are shared out in
//     proportion to the bytes of text each event carried, at least one
//     each (largest remainder). Tokens of the first event beyond its first
//     arrive with it and add no gap.
func compute(send time.Time, events []contentEvent, end time.Time, tokens int) metrics {
	var m metrics
	if len(events) == 0 {
		m.E2E = end.Sub(send)
		return m
	}
	m.TTFT = events[0].at.Sub(send)
	m.E2E = events[len(events)-1].at.Sub(send)
	if tokens > 1 {
		m.TPOT = (m.E2E - m.TTFT) / time.Duration(tokens-1)
	}
	per := shareTokens(events, tokens)
	var itl []float64
	for i := 1; i < len(events); i++ {
		gap := float64(events[i].at.Sub(events[i-1].at))
		for range per[i] {
			itl = append(itl, gap/float64(per[i]))
		}
	}
	s := stats.Summarize(itl)
	m.ITLMean, m.ITLP50, m.ITLP99, m.ITLMax = time.Duration(s.Mean), time.Duration(s.P50), time.Duration(s.P99), time.Duration(s.Max)
	return m
}

// shareTokens gives each event its share of tokens: one each when there
// are no more tokens than events, else in proportion to its bytes.
func shareTokens(events []contentEvent, tokens int) []int {
	per := make([]int, len(events))
	if tokens <= len(events) {
		for i := range per {
			per[i] = 1
		}
		return per
	}
	total := 0
	for _, e := range events {
		total += e.chars
	}
	extra := tokens - len(events) // beyond one per event
	type rem struct {
		i int
		r float64
	}
	given := 0
	rems := make([]rem, len(events))
	for i, e := range events {
		exact := float64(extra) * float64(e.chars) / float64(total)
		per[i] = 1 + int(exact)
		given += int(exact)
		rems[i] = rem{i, exact - float64(int(exact))}
	}
	// Largest remainders get the tokens rounding left over; ties go to the
	// earlier event.
	for left := extra - given; left > 0; left-- {
		best := 0
		for j := range rems {
			if rems[j].r > rems[best].r {
				best = j
			}
		}
		per[rems[best].i]++
		rems[best].r = -1
	}
	return per
}

// estimateTokens counts output tokens when the runtime reports no usage:
// one per content event (runtimes stream a token or so per event). The
// result is flagged as estimated.
func estimateTokens(events []contentEvent) int { return len(events) }
