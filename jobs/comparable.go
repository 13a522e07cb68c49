package jobs

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// LoadIdentity is what a run's speed and latency are comparable under.
type LoadIdentity struct {
	Profile   string `json:"profile"`
	Params    string `json:"params"`
	Sampling  string `json:"sampling"`
	DatasetID int64  `json:"dataset_id"`
	// InputClass and OutputClass are the length classes identities kept
	// before measured lengths replaced them ("" in newer ones).
	InputClass  string `json:"input_tokens"`
	OutputClass string `json:"output_tokens"`
	// MeanIn and MeanOut are the run's measured mean prompt and answer
	// lengths in tokens: two runs are comparable on speed only while
	// each is within LengthRatio of the other's (LengthsDiffer).
	MeanIn  float64 `json:"mean_input_tokens,omitempty"`
	MeanOut float64 `json:"mean_output_tokens,omitempty"`
	// FewShot is the run's few-shot setting ("5-shot seed=1234"), "" for
	// the dataset's own prompts.
	FewShot string `json:"fewshot,omitempty"`
}

// Key is the identity as one comparable text: what must be equal. The
// measured lengths are not in it (they need only be close:
// LengthsDiffer); the classes of identities kept before them are.
func (l LoadIdentity) Key() string {
	k := fmt.Sprintf("%s %s | %s | dataset %d", l.Profile, l.Params, l.Sampling, l.DatasetID)
	if l.InputClass != "" || l.OutputClass != "" {
		k += fmt.Sprintf(" | in %s | out %s", l.InputClass, l.OutputClass)
	}
	if l.FewShot != "" {
		k += " | " + l.FewShot
	}
	return k
}

// Differences names, in words, where l and o differ.
func (l LoadIdentity) Differences(o LoadIdentity) []string {
	var out []string
	if l.Profile != o.Profile || l.Params != o.Params {
		out = append(out, fmt.Sprintf("load %s %s vs %s %s", l.Profile, l.Params, o.Profile, o.Params))
	}
	if l.Sampling != o.Sampling {
		out = append(out, fmt.Sprintf("sampling %s vs %s", l.Sampling, o.Sampling))
	}
	if l.DatasetID != o.DatasetID {
		out = append(out, fmt.Sprintf("dataset %d vs %d", l.DatasetID, o.DatasetID))
	}
	if l.InputClass != o.InputClass {
		out = append(out, fmt.Sprintf("input length %s vs %s tokens", l.InputClass, o.InputClass))
	}
	if l.OutputClass != o.OutputClass {
		out = append(out, fmt.Sprintf("output length %s vs %s tokens", l.OutputClass, o.OutputClass))
	}
	in, outLen := l.LengthsDiffer(o)
	if in {
		out = append(out, fmt.Sprintf("mean input length %.1f vs %.1f tokens (more than %g× apart)", l.MeanIn, o.MeanIn, LengthRatio))
	}
	if outLen {
		out = append(out, fmt.Sprintf("mean output length %.1f vs %.1f tokens (more than %g× apart)", l.MeanOut, o.MeanOut, LengthRatio))
	}
	if l.FewShot != o.FewShot {
		out = append(out, fmt.Sprintf("prompts %s vs %s", orZeroShot(l.FewShot), orZeroShot(o.FewShot)))
	}
	return out
}

func orZeroShot(s string) string {
	if s == "" {
		return "0-shot"
	}
	return s
}

// LengthRatio is how far apart two runs' measured mean prompt or answer
// lengths may be and their speed still be compared
// (docs/concepts.md#comparability-and-noise): a run's tokens/s and a
// request's latency move with the tokens it reads and writes (prefill is
// proportional to the prompt and amortised over the answer, each decode
// step reads the whole KV cache), so runs whose lengths are of another
// size are not compared. Within a factor of two — two models answering
// one dataset more or less tersely, two runs whose answers ended a few
// tokens apart — they are: that is the comparison users run, and the
// per-token rate moves far less than the length. The rule is on the
// measured means, so 63.8 and 64.0 tokens compare (the fixed classes by
// factors of four it replaces split them, and joined 65 with 250).
const LengthRatio = 2.0

// LengthsDiffer says whether l's and o's measured mean input and output
// lengths are more than LengthRatio apart. Identities without measured
// lengths (kept before them) differ in nothing here.
func (l LoadIdentity) LengthsDiffer(o LoadIdentity) (in, out bool) {
	return ratioApart(l.MeanIn, o.MeanIn), ratioApart(l.MeanOut, o.MeanOut)
}

// ratioApart says whether a and b, both measured, are more than
// LengthRatio apart.
func ratioApart(a, b float64) bool {
	if a <= 0 && b <= 0 {
		return false
	}
	lo, hi := min(a, b), max(a, b)
	return lo <= 0 || hi/lo > LengthRatio*(1+1e-12)
}

// roundTenth keeps a measured mean length to a tenth of a token.
func roundTenth(x float64) float64 { return math.Round(x*10) / 10 }

// NewLoadIdentity builds a run's load identity from its benchmark's manifest
// and its measured lengths.
func NewLoadIdentity(manifest json.RawMessage, datasetID int64, meanIn, meanOut float64) LoadIdentity {
	var m struct {
		Load     LoadProfile `json:"load"`
		Sampling Sampling    `json:"sampling"`
		Imported bool        `json:"imported"`
	}
	_ = json.Unmarshal(manifest, &m)
	l := m.Load
	var params []string
	add := func(name string, v any, set bool) {
		if set {
			params = append(params, fmt.Sprintf("%s=%v", name, v))
		}
	}
	add("concurrency", l.Concurrency, l.Concurrency > 0)
	add("rate", l.Rate, l.Rate > 0)
	add("steps", l.Steps, l.Steps > 0)
	add("rates", l.Rates, len(l.Rates) > 0)
	add("concurrencies", l.Concurrencies, len(l.Concurrencies) > 0)
	add("speed", l.Speed, l.Speed > 0)
	// A length sweep's lengths are its load: two sweeps of other lengths
	// are not one load.
	if l.Lengths != nil {
		add("lengths", fmt.Sprintf("input%v output%v", l.Lengths.Input, l.Lengths.Output), true)
	}
	// How long the run measured is part of its load: a run of 30
	// requests and one of 200 see different warm-up, caches and drain.
	add("warmup", l.Warmup, l.Warmup > 0)
	add("max_requests", l.MaxRequests, l.MaxRequests > 0)
	add("max_duration", time.Duration(l.MaxDuration), l.MaxDuration > 0)
	profile := l.Profile
	switch {
	case m.Imported:
		// Measured elsewhere, under a load Ruckus did not set: comparable
		// with nothing Ruckus ran.
		profile = "imported"
	case profile == "":
		profile = "sequential"
	}
	temp := "default"
	if m.Sampling.Temperature != nil {
		temp = fmt.Sprint(*m.Sampling.Temperature)
	}
	n := max(m.Sampling.N, 1)
	return LoadIdentity{
		Profile: profile, Params: "(" + strings.Join(params, ", ") + ")",
		Sampling:  fmt.Sprintf("max_tokens=%d n=%d temperature=%s", m.Sampling.MaxTokens, n, temp),
		DatasetID: datasetID, MeanIn: roundTenth(meanIn), MeanOut: roundTenth(meanOut),
	}
}
