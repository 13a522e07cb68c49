package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
)

// LoadIdentity is what a run's speed and latency are comparable under.
type LoadIdentity struct {
	Profile     string `json:"profile"`
	Params      string `json:"params"`
	Sampling    string `json:"sampling"`
	DatasetID   int64  `json:"dataset_id"`
	InputClass  string `json:"input_tokens"`
	OutputClass string `json:"output_tokens"`
	// FewShot is the run's few-shot setting ("5-shot seed=1234"), "" for
	// the dataset's own prompts.
	FewShot string `json:"fewshot,omitempty"`
}

// Key is the identity as one comparable text.
func (l LoadIdentity) Key() string {
	k := fmt.Sprintf("%s %s | %s | dataset %d | in %s | out %s", l.Profile, l.Params, l.Sampling, l.DatasetID, l.InputClass, l.OutputClass)
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

// lengthClass buckets a mean request length by factors of four, so that
// runs whose answers are of a different order of length are not compared
// on speed (a 20-token answer streams at another rate than a 2,000-token
// one), while a few per cent apart are.
func lengthClass(mean float64) string {
	switch {
	case mean < 64:
		return "<64"
	case mean < 256:
		return "64–255"
	case mean < 1024:
		return "256–1023"
	case mean < 4096:
		return "1024–4095"
	}
	return "≥4096"
}

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
		DatasetID: datasetID, InputClass: lengthClass(meanIn), OutputClass: lengthClass(meanOut),
	}
}
