package openai

import (
	"math"
	"slices"
	"testing"
	"time"
)

// t0 is the send time of the synthetic requests; at(ms) is ms later.
var t0 = time.Unix(1_700_000_000, 0)

func at(ms float64) time.Time { return t0.Add(dur(ms)) }

func dur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// ev is a content event at ms with an estimate of est tokens and chars
// characters, and no per-chunk count.
func ev(ms float64, est, chars int) contentEvent {
	return contentEvent{at: at(ms), estimate: est, chars: chars}
}

// reported is a content event the runtime said carried n tokens.
func reported(ms float64, n int) contentEvent {
	return contentEvent{at: at(ms), estimate: 1, chars: 1, reported: n}
}

// closeTo allows the nanosecond lost when a fractional gap is truncated.
func closeTo(got, want time.Duration) bool { return got-want <= 1 && want-got <= 1 }

func TestComputeTimings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		events []contentEvent
		end    float64
		tokens int
		// want, in milliseconds: TTFT, E2E, TPOT, ITL mean, p50, p99, max.
		ttft, e2e, tpot, mean, p50, p99, max float64
		samples                              int
	}{
		{
			// 4 single-token events 20 ms apart: every ITL is 20 ms and
			// TPOT = 60/3.
			name:   "one token per event",
			events: []contentEvent{ev(100, 1, 3), ev(120, 1, 3), ev(140, 1, 3), ev(160, 1, 3)},
			end:    170, tokens: 4,
			ttft: 100, e2e: 160, tpot: 20, mean: 20, p50: 20, p99: 20, max: 20, samples: 3,
		},
		{
			// Gaps 10, 20, 60; the last event carries 2 tokens (estimate
			// 2 = usage 5 − 3 events), so its 60 ms gives two samples of 30.
			// Samples [10 20 30 30]: mean 22.5, p50 (h=1.5) 25, p99
			// (h=2.97) 30. TPOT = 90/4.
			name:   "uneven gaps and a two-token event",
			events: []contentEvent{ev(100, 1, 4), ev(110, 1, 4), ev(130, 1, 4), ev(190, 2, 8)},
			end:    200, tokens: 5,
			ttft: 100, e2e: 190, tpot: 22.5, mean: 22.5, p50: 25, p99: 30, max: 30, samples: 4,
		},
		{
			// Usage 9 over 3 events with estimates 1, 2, 3: the 6 extra
			// tokens go by estimated extras 0:1:2 → shares 1, 3, 5. Samples
			// 40/3 (×3) and 60/5 = 12 (×5): mean 100/8 = 12.5; sorted, p50
			// (h=3.5) is 12 and p99 (h=6.93) is 40/3. TPOT = 100/8.
			name:   "usage total shared out by estimates",
			events: []contentEvent{ev(100, 1, 4), ev(140, 2, 8), ev(200, 3, 10)},
			end:    210, tokens: 9,
			ttft: 100, e2e: 200, tpot: 12.5, mean: 12.5, p50: 12, p99: 40.0 / 3, max: 40.0 / 3, samples: 8,
		},
		{
			// Per-chunk usage says 1, 4 and 2 tokens: samples 80/4 = 20
			// (×4) and 20/2 = 10 (×2). Sorted [10 10 20 20 20 20]: mean
			// 100/6, p50 (h=2.5) 20, p99 (h=4.95) 20. TPOT = 100/6.
			name:   "per-chunk usage",
			events: []contentEvent{reported(100, 1), reported(180, 4), reported(200, 2)},
			end:    200, tokens: 7,
			ttft: 100, e2e: 200, tpot: 100.0 / 6, mean: 100.0 / 6, p50: 20, p99: 20, max: 20, samples: 6,
		},
		{
			// The first event carries 3 tokens that arrive at TTFT: one
			// sample (30 ms) for the one token of the second event, while
			// TPOT spreads the 30 ms over 3 tokens.
			name:   "first event carries several tokens",
			events: []contentEvent{reported(100, 3), reported(130, 1)},
			end:    130, tokens: 4,
			ttft: 100, e2e: 130, tpot: 10, mean: 30, p50: 30, p99: 30, max: 30, samples: 1,
		},
		{
			// The runtime counted fewer tokens than content events: one
			// each. Samples [10 20]: p99 (h=0.99) = 10 + 0.99·10.
			// TPOT = 30/(2−1).
			name:   "fewer tokens than events",
			events: []contentEvent{ev(100, 1, 1), ev(110, 1, 1), ev(130, 1, 1)},
			end:    130, tokens: 2,
			ttft: 100, e2e: 130, tpot: 30, mean: 15, p50: 15, p99: 19.9, max: 20, samples: 2,
		},
		{
			name: "no content: E2E runs to the end, no TTFT",
			end:  30, tokens: 0,
			e2e: 30,
		},
		{
			// A non-streaming answer: one event with everything.
			name:   "one event with every token",
			events: []contentEvent{ev(250, 30, 120)},
			end:    250, tokens: 40,
			ttft: 250, e2e: 250,
		},
		{
			name:   "a single token has no TPOT",
			events: []contentEvent{ev(80, 1, 2)},
			end:    90, tokens: 1,
			ttft: 80, e2e: 80,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := computeTimings(t0, c.events, at(c.end), c.tokens)
			got := []time.Duration{m.TTFT, m.E2E, m.TPOT, m.ITLMean, m.ITLP50, m.ITLP99, m.ITLMax}
			want := []time.Duration{dur(c.ttft), dur(c.e2e), dur(c.tpot), dur(c.mean), dur(c.p50), dur(c.p99), dur(c.max)}
			names := []string{"TTFT", "E2E", "TPOT", "ITL mean", "ITL p50", "ITL p99", "ITL max"}
			for i := range got {
				if !closeTo(got[i], want[i]) {
					t.Errorf("%s = %v, want %v", names[i], got[i], want[i])
				}
			}
			if m.ITLSamples != c.samples {
				t.Errorf("%d ITL samples, want %d", m.ITLSamples, c.samples)
			}
		})
	}
}

// TestComputeTimingsKeepsEveryGap checks the stored form: one gap per
// content event after the first, in microseconds (rounded), and the
// tokens each event carried only when some event carried several.
func TestComputeTimingsKeepsEveryGap(t *testing.T) {
	t.Parallel()
	one := computeTimings(t0, []contentEvent{ev(100, 1, 1), ev(110.0004, 1, 1), ev(130.0006, 1, 1)}, at(131), 3)
	if want := []int32{10000, 20000}; !slices.Equal(one.GapsMicros, want) || one.Tokens != nil {
		t.Errorf("one token per event: gaps %v tokens %v, want %v and nil", one.GapsMicros, one.Tokens, want)
	}
	// 60 ms over the 2 tokens of the second event, 40 ms for the third's
	// one: samples [30 30 40] and the stored gaps keep what was seen.
	multi := computeTimings(t0, []contentEvent{reported(100, 1), reported(160, 2), reported(200, 1)}, at(200), 4)
	if !slices.Equal(multi.GapsMicros, []int32{60000, 40000}) || !slices.Equal(multi.Tokens, []int32{2, 1}) {
		t.Errorf("multi-token event: gaps %v tokens %v, want [60000 40000] [2 1]", multi.GapsMicros, multi.Tokens)
	}
	if multi.ITLSamples != 3 || !closeTo(multi.ITLP50, dur(30)) || !closeTo(multi.ITLMax, dur(40)) {
		t.Errorf("multi-token event: %d samples, p50 %v, max %v; want 3, 30ms, 40ms", multi.ITLSamples, multi.ITLP50, multi.ITLMax)
	}
	if none := computeTimings(t0, []contentEvent{ev(100, 1, 1)}, at(100), 1); none.GapsMicros != nil || none.Tokens != nil {
		t.Errorf("one event: gaps %v tokens %v, want none", none.GapsMicros, none.Tokens)
	}
	// A runtime's absurd usage is bounded in the stored counts.
	huge := computeTimings(t0, []contentEvent{reported(100, 1), reported(200, 1<<40)}, at(200), 1<<40+1)
	if !slices.Equal(huge.Tokens, []int32{math.MaxInt32}) {
		t.Errorf("huge token count stored as %v, want the int4 bound", huge.Tokens)
	}
}

func TestTokensPerEvent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		events []contentEvent
		tokens int
		want   []int
	}{
		{"none", nil, 0, []int{}},
		{"one each", []contentEvent{ev(1, 1, 1), ev(2, 1, 1)}, 2, []int{1, 1}},
		{"fewer tokens than events", []contentEvent{ev(1, 1, 1), ev(2, 1, 1), ev(3, 1, 1)}, 1, []int{1, 1, 1}},
		{"estimates match usage", []contentEvent{ev(1, 1, 1), ev(2, 3, 9), ev(3, 2, 5)}, 6, []int{1, 3, 2}},
		// Extras 4 by estimated extras 0:1:2 → 4/3 and 8/3: integer parts
		// 1 and 2, remainders 1/3 and 2/3 → the last token to event 3.
		{"usage above estimates", []contentEvent{ev(1, 1, 1), ev(2, 2, 9), ev(3, 3, 5)}, 7, []int{1, 2, 4}},
		// Usage below the estimates: extras 1 by 0:2:2 → a tie broken
		// towards the earlier event.
		{"usage below estimates", []contentEvent{ev(1, 1, 1), ev(2, 3, 9), ev(3, 3, 9)}, 4, []int{1, 2, 1}},
		// The estimate sees one token per event: extras 4 by length 2:6:2
		// → 0.8, 2.4, 0.8: integer parts 0, 2, 0; remainders 0.8 (event 1),
		// 0.4, 0.8 (event 3) → events 1 and 3 get the last two.
		{"single-token estimates: by length", []contentEvent{ev(1, 1, 2), ev(2, 1, 6), ev(3, 1, 2)}, 7, []int{2, 3, 2}},
		{"reported counts win", []contentEvent{reported(1, 2), reported(2, 5)}, 3, []int{2, 5}},
		// One event without a count: the per-chunk counts are set aside and
		// the 2 extra tokens go by length, 1:1.
		{"partly reported", []contentEvent{reported(1, 2), ev(2, 1, 1)}, 4, []int{2, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := tokensPerEvent(c.events, c.tokens)
			if !slices.Equal(got, c.want) {
				t.Fatalf("tokensPerEvent = %v, want %v", got, c.want)
			}
			sum := 0
			for _, n := range got {
				sum += n
			}
			if len(c.events) > 0 && c.events[0].reported == 0 && sum != max(c.tokens, len(c.events)) {
				t.Errorf("shares add up to %d, want %d", sum, max(c.tokens, len(c.events)))
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	// Pieces as a cl100k-style pre-tokenizer splits the text; the split is
	// written out beside each count.
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 1}, // no text still counts as one token of an event
		{"Hello", 1},
		{" world", 1},
		{"Hello, world!", 4}, // "Hello" "," " world" "!"
		{" the cat sat.", 4}, // " the" " cat" " sat" "."
		{"don't", 2},         // "don" "'t"
		{"(word", 1},         // one non-letter may lead a word
		{" (x)", 3},          // " (" "x" ")"
		{"12345", 2},         // "123" "45"
		{" 42", 2},           // " " "42"
		{"a1", 2},            // "a" "1"
		{"\n\n", 1},          // one run of line breaks
		{"a\n\nb", 3},        // "a" "\n\n" "b"
		{"x   y", 3},         // "x" "  " " y": the last space goes with y
		{"trailing  ", 2},    // "trailing" "  "
		{"...)", 1},          // one run of punctuation
		{"end.\n\nNext", 3},  // "end" ".\n\n" "Next"
		{"日本語", 1},           // letters without spaces: an undercount
		{"cafe\u0301 ok", 2}, // a combining mark stays in its word
		{"\t", 1},            // whitespace alone
		{"Ω≈ç", 2},           // "Ω" "≈ç"
		{`{"a": 1}`, 6},      // `{"` `a` `":` ` ` `1` `}`
		{"a \n b", 3},        // "a" " \n" " b": whitespace up to its last line break
	} {
		if got := estimateTokens(c.text); got != c.want {
			t.Errorf("estimateTokens(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}
