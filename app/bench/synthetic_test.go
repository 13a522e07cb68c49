package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/jobs"
)

const syntheticYAML = `
name: sizing
synthetic:
  kind: trace
  count: 50
  rate: 4
  seed: 1
  input: {dist: lognormal, median: 256, sigma: 0.5, max: 2048}
  output: {dist: uniform, min: 64, max: 128}
targets:
  - {model: m, runtime: sim, hardware: cpu-2c}
load: {profile: trace, speed: 2, max_duration: 5m}
sampling: {max_tokens: 256}
`

func TestSyntheticManifest(t *testing.T) {
	t.Parallel()
	m, err := Decode(strings.NewReader(syntheticYAML))
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.Validate(); len(errs) != 0 {
		t.Fatalf("valid manifest: %v", errs)
	}
	if m.Synthetic.Input.Kind != synth.DistLognormal || m.Synthetic.Input.Median != 256 || m.Load.Speed != 2 || syntheticItems(*m.Synthetic) != 50 {
		t.Fatalf("decoded %+v", m.Synthetic)
	}
	if _, err := Decode(strings.NewReader(strings.Replace(syntheticYAML, "rate: 4", "rate: 4\n  rte: 3", 1))); err == nil {
		t.Fatal("an unknown synthetic field was accepted")
	}

	tests := []struct {
		name string
		edit func(*Manifest)
		path string
	}{
		{"both dataset and synthetic", func(m *Manifest) { m.Dataset.Name = "x" }, "synthetic"},
		{"bad distribution", func(m *Manifest) { m.Synthetic.Input = synth.Fixed(0) }, "synthetic.input.value"},
		{"NaN rate", func(m *Manifest) { m.Synthetic.Rate = math.NaN() }, "synthetic.rate"},
		{"bad kind", func(m *Manifest) { m.Synthetic.Kind = "zipf" }, "synthetic.kind"},
		{"NaN speed", func(m *Manifest) { m.Load.Speed = math.NaN() }, "load.speed"},
		{"negative speed", func(m *Manifest) { m.Load.Speed = -1 }, "load.speed"},
		{"speed without trace", func(m *Manifest) { m.Load.Profile = jobs.LoadSequential }, "load.speed"},
		{"trace profile on random items", func(m *Manifest) { m.Synthetic.Kind = synth.KindRandom }, "load.profile"},
		{"neither", func(m *Manifest) { m.Synthetic = nil }, "dataset"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := Decode(strings.NewReader(syntheticYAML))
			tc.edit(&m)
			for _, e := range m.Validate() {
				if e.Path == tc.path {
					return
				}
			}
			t.Fatalf("want an error on %s, got %v", tc.path, m.Validate())
		})
	}
}
