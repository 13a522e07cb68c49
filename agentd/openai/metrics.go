package openai

import (
	"math"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/stats"
)

// contentEvent is one event that carried generated content, reduced to
// what the timings need. Keeping it free of I/O lets computeTimings be a
// pure function that tests feed synthetic timestamps.
type contentEvent struct {
	// at is when the event was read (monotonic clock).
	at time.Time
	// estimate is the tokens its text is estimated to hold (at least 1),
	// by estimateTokens.
	estimate int
	// chars is the length of its generated text in runes (at least 1).
	chars int
	// reported is the runtime's own count of the tokens this event
	// carried, from per-chunk usage (cumulative completion_tokens, as
	// vLLM's continuous_usage_stats sends); 0 when unknown.
	reported int
}

// timings are one request's figures (docs/metrics.md#definitions).
type timings struct {
	TTFT, E2E, TPOT                 time.Duration
	ITLMean, ITLP50, ITLP99, ITLMax time.Duration
	// ITLSamples is how many inter-token latencies were summarised.
	ITLSamples int
	// GapsMicros and Tokens are the stored form of the latencies: one gap
	// per content event after the first, in microseconds, and how many
	// tokens that event carried (nil when every event carried one).
	GapsMicros, Tokens []int32
}

// computeTimings derives a request's timings from the send time, its
// content events in arrival order, the end of the response and its output
// tokens (the runtime's usage, or the client-side estimate):
//   - TTFT: send → first content event. Events that carry no generated
//     content (a role-only first chunk, a finish-only or usage-only chunk)
//     are not content events and never start the clock;
//   - E2E: send → last content event; with no content event, send → end;
//   - TPOT: (E2E − TTFT) / (tokens − 1), zero with fewer than two tokens;
//   - ITL: for each content event after the first, the gap since the
//     previous content event is divided evenly among the tokens the later
//     event carried (tokensPerEvent says how many), giving that many equal
//     samples. The first event's tokens arrive together at TTFT and add no
//     sample, so when the first event carries several tokens the mean ITL
//     is slightly above TPOT.
func computeTimings(send time.Time, events []contentEvent, end time.Time, tokens int) timings {
	var m timings
	if len(events) == 0 {
		m.E2E = end.Sub(send)
		return m
	}
	m.TTFT = events[0].at.Sub(send)
	m.E2E = events[len(events)-1].at.Sub(send)
	if tokens > 1 {
		m.TPOT = (m.E2E - m.TTFT) / time.Duration(tokens-1)
	}
	per := tokensPerEvent(events, tokens)
	itl := make([]stats.Repeated, 0, len(events)-1)
	if len(events) > 1 {
		m.GapsMicros = make([]int32, 0, len(events)-1)
	}
	single := true
	for i := 1; i < len(events); i++ {
		d := events[i].at.Sub(events[i-1].at)
		itl = append(itl, stats.Repeated{Value: float64(d) / float64(per[i]), Count: per[i]})
		m.GapsMicros = append(m.GapsMicros, clamp32((d+time.Microsecond/2)/time.Microsecond))
		single = single && per[i] == 1
	}
	if !single {
		m.Tokens = make([]int32, len(m.GapsMicros))
		for i := range m.Tokens {
			m.Tokens[i] = clamp32(time.Duration(per[i+1]))
		}
	}
	// Summarised as repeated values: a runtime's usage decides how many
	// samples there are, and must not decide how much memory is used.
	s := stats.SummarizeRepeated(itl)
	m.ITLSamples = s.N
	m.ITLMean, m.ITLP50, m.ITLP99, m.ITLMax = time.Duration(s.Mean), time.Duration(s.P50), time.Duration(s.P99), time.Duration(s.Max)
	return m
}

// clamp32 bounds v to what an int4 column holds; a gap over 35 minutes or
// a token count over two billion is kept at the bound rather than wrapped.
func clamp32(v time.Duration) int32 {
	return int32(min(max(v, 0), math.MaxInt32))
}

// tokensPerEvent says how many tokens each content event carried. Only a
// total is usually known (usage.completion_tokens), so:
//  1. when the runtime counted every content event itself (per-chunk
//     usage, each event adding at least one token), those counts are used;
//  2. else when tokens ≤ the number of events, each event carried one;
//  3. else each event carried one, and the tokens beyond one per event are
//     shared out in proportion to each event's estimated extra tokens
//     (estimate − 1) — or, when the estimate sees a single token in every
//     event, in proportion to each event's length in characters — with
//     largest remainders (ties to the earlier event) so the shares add up
//     to tokens exactly.
func tokensPerEvent(events []contentEvent, tokens int) []int {
	per := make([]int, len(events))
	reported := true
	for i, e := range events {
		per[i] = 1
		reported = reported && e.reported >= 1
	}
	if reported {
		for i, e := range events {
			per[i] = e.reported
		}
		return per
	}
	extra := tokens - len(events)
	if extra <= 0 {
		return per
	}
	weight := make([]int, len(events))
	total := 0
	for i, e := range events {
		weight[i] = max(e.estimate-1, 0)
		total += weight[i]
	}
	if total == 0 {
		for i, e := range events {
			weight[i] = max(e.chars, 1)
			total += weight[i]
		}
	}
	// Integer shares first; then the largest remainders (remainders are
	// compared as weight·extra mod total, exact in integers).
	given := 0
	rem := make([]int, len(events))
	for i, w := range weight {
		share := w * extra / total
		per[i] += share
		given += share
		rem[i] = w * extra % total
	}
	for left := extra - given; left > 0; left-- {
		best := 0
		for j := range rem {
			if rem[j] > rem[best] {
				best = j
			}
		}
		per[best]++
		rem[best] = -1
	}
	return per
}

// estimateTokens estimates how many tokens text holds when the runtime
// does not say: the number of pieces a GPT-4-style BPE pre-tokenizer
// splits it into (at least 1), approximating cl100k's split pattern:
//   - a run of letters, with at most one leading character that is not a
//     letter, digit or line break (" the", "'s", "(word");
//   - one to three digits;
//   - a run of punctuation or symbols with an optional leading space and
//     any line breaks that follow it;
//   - a run of whitespace up to its last line break; or whitespace that
//     leaves its last space to the word after it.
//
// BPE tokens never straddle these pieces, so the count is a lower bound
// that is exact whenever each piece is a single token — which it is when
// the runtime streams one token per event (the usual case), and for text
// of common words. Rare words split into several tokens are undercounted.
// Counting per event rather than over the whole text keeps a word split
// across two events at two.
func estimateTokens(text string) int {
	return max(countPieces(text), 1)
}

// countPieces counts the pre-tokenizer pieces of text (see estimateTokens).
func countPieces(text string) int {
	r := []rune(text)
	n := 0
	letters := func(i int) int {
		for i < len(r) && isLetter(r[i]) {
			i++
		}
		return i
	}
	for i := 0; i < len(r); n++ {
		c := r[i]
		switch {
		case isLetter(c):
			i = letters(i)
		case !isDigit(c) && c != '\r' && c != '\n' && i+1 < len(r) && isLetter(r[i+1]):
			i = letters(i + 1)
		case isDigit(c):
			j := i + 1
			for j < len(r) && j < i+3 && isDigit(r[j]) {
				j++
			}
			i = j
		case isPunct(c) || (c == ' ' && i+1 < len(r) && isPunct(r[i+1])):
			if c == ' ' {
				i++
			}
			for i < len(r) && isPunct(r[i]) {
				i++
			}
			for i < len(r) && (r[i] == '\r' || r[i] == '\n') {
				i++
			}
		default: // whitespace
			j, lastBreak := i, -1
			for j < len(r) && unicode.IsSpace(r[j]) {
				if r[j] == '\r' || r[j] == '\n' {
					lastBreak = j
				}
				j++
			}
			switch {
			case lastBreak >= 0:
				i = lastBreak + 1
			case j == len(r) || j-i == 1:
				i = j
			default: // the last space goes with what follows
				i = j - 1
			}
		}
	}
	return n
}

func isLetter(c rune) bool { return unicode.IsLetter(c) || unicode.IsMark(c) }
func isDigit(c rune) bool  { return unicode.IsNumber(c) }
func isPunct(c rune) bool  { return !isLetter(c) && !isDigit(c) && !unicode.IsSpace(c) }

// runes is the length of s in characters, at least 1 (a weight).
func runes(s string) int { return max(utf8.RuneCountInString(s), 1) }
