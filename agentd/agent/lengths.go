package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/jobs"
)

// fillerWords are what a length sweep's prompts are made of: common
// English words of four bytes with their space, each one token in the
// BPE vocabularies of Llama, Qwen, Mistral and GPT, and four characters
// (one token) on the simulated runtime, so a prompt's tokens grow by one
// a word (docs/benchmarks.md#length-sweeps).
var fillerWords = [...]string{" the", " and", " for", " you", " not", " are", " but", " all"}

// Calibration probes: two prompts of these many filler words, one token
// of answer each.
const (
	probeShort = 16
	probeLong  = probeShort + 256
)

// lengthPrompts makes a length sweep's prompts: a head unique to the
// request (so no two prompts share a cached prefix) and filler words, as
// many as the calibration says make the step's input length in the served
// model's tokens.
type lengthPrompts struct {
	steps []jobs.LengthStep
	// perWord and overhead are tokens per filler word and the tokens the
	// head and the chat template add, from the runtime's usage when
	// measured, else the approximation of one token a word and four
	// for the head.
	perWord, overhead float64
	measured          bool
	// forced asks min_tokens and ignore_eos beside max_tokens, so an
	// answer runs to its step's output length; not for the remote APIs,
	// which refuse fields they do not know.
	forced bool
	seed   uint64
}

// calibrateLengths measures, with two probes, how many tokens the served
// model counts for a prompt of so many filler words: the usage block's
// prompt_tokens of each gives tokens per word and the constant overhead.
// Where the runtime reports no usage, or a probe fails, the prompts keep
// the approximation, and the log says so.
func calibrateLengths(ctx context.Context, client *openai.Client, model string, a jobs.RunArgs, log *slog.Logger) *lengthPrompts {
	p := &lengthPrompts{steps: a.Load.Lengths.Steps(), perWord: 1, overhead: 4, seed: uint64(a.RunID),
		forced: a.Runtime != "openai" && a.Runtime != "anthropic"}
	probe := func(words int) int {
		req, err := openai.BuildRequest(p.item(-1-words, words, 1), model, jobs.Sampling{MaxTokens: 1})
		if err != nil {
			return 0
		}
		res := client.Do(ctx, req)
		if res.Status != jobs.StatusOK {
			return 0
		}
		return res.PromptTokens
	}
	short, long := probe(probeShort), probe(probeLong)
	if short > 0 && long > short {
		p.perWord = float64(long-short) / (probeLong - probeShort)
		p.overhead = float64(short) - p.perWord*probeShort
		p.measured = true
	}
	log.Info("length sweep prompts", "measured", p.measured, "tokens_per_word", p.perWord, "overhead_tokens", p.overhead,
		"probe_tokens", []int{short, long})
	return p
}

// words is how many filler words make a prompt of target tokens.
func (p *lengthPrompts) words(target int) int {
	return max(1, int(math.Round((float64(target)-p.overhead)/p.perWord)))
}

// request is the item to send for key k in the given phase: its step's
// lengths (a warm-up request takes the first step's).
func (p *lengthPrompts) request(k int, phase string) []byte {
	step, ok := jobs.ParseLengthPhase(phase)
	if !ok && len(p.steps) > 0 {
		step = p.steps[0]
	}
	return p.item(k, p.words(step.Input), step.Output)
}

// item is a chat request of a head unique to k and words filler words
// drawn from the run's seed; output, when above 0, is its answer's length.
func (p *lengthPrompts) item(k, words, output int) []byte {
	rng := rand.New(rand.NewPCG(p.seed, uint64(int64(k))))
	var b strings.Builder
	b.Grow(9 + 4*words)
	fmt.Fprintf(&b, "%08d:", uint64(int64(k))%100_000_000)
	for range words {
		b.WriteString(fillerWords[rng.IntN(len(fillerWords))])
	}
	body := map[string]any{"messages": []map[string]string{{"role": "user", "content": b.String()}}}
	if output > 0 {
		body["max_tokens"] = output
		if p.forced {
			body["min_tokens"], body["ignore_eos"] = output, true
		}
	}
	out, _ := json.Marshal(map[string]any{"method": "POST", "url": openai.PathChat, "body": body})
	return out
}
