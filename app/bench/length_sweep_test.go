package bench

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/jobs"
)

const lengthSweepYAML = `
name: Where does prefill stop keeping up?
dataset: 1
targets: [{model: Qwen/Qwen2.5-7B-Instruct, runtime: vllm, hardware: h100-80gb-x1}]
load: {profile: length-sweep, concurrency: 4, lengths: {input: [128, 512, 2048, 8192], output: [128]}}
sampling: {max_tokens: 64}
`

// TestLengthSweepManifest: the documented manifest decodes into its steps,
// inputs outermost, each labelled as the store reads it back.
func TestLengthSweepManifest(t *testing.T) {
	t.Parallel()
	m, err := Decode(strings.NewReader(lengthSweepYAML))
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.Validate(); len(errs) > 0 {
		t.Fatalf("valid length sweep refused: %v", errs)
	}
	var phases []string
	for _, s := range m.Load.Lengths.Steps() {
		back, ok := jobs.ParseLengthPhase(s.Phase())
		if !ok || back != s {
			t.Errorf("step %+v reads back as %+v, %v", s, back, ok)
		}
		phases = append(phases, s.Phase())
	}
	want := []string{"input 128 output 128", "input 512 output 128", "input 2048 output 128", "input 8192 output 128"}
	if !slices.Equal(phases, want) {
		t.Errorf("steps %q, want %q", phases, want)
	}
	two := jobs.Lengths{Input: []int{1, 2}, Output: []int{3, 4}}
	if got := len(two.Steps()); got != 4 {
		t.Errorf("2 inputs × 2 outputs gave %d steps", got)
	}
	if got := (&jobs.Lengths{Input: []int{64}}).Steps(); len(got) != 1 || got[0].Phase() != "input 64" {
		t.Errorf("an input alone gave %+v", got)
	}
}

// TestLengthSweepRefusedNamingTheField: every fault of a length sweep is
// a 422 at the field it is about.
func TestLengthSweepRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*Manifest)
		path   string
	}{
		{"no lengths", func(m *Manifest) { m.Load.Lengths = nil }, "load.lengths.input"},
		{"no inputs", func(m *Manifest) { m.Load.Lengths.Input = nil }, "load.lengths.input"},
		{"zero input", func(m *Manifest) { m.Load.Lengths.Input[1] = 0 }, "load.lengths.input[1]"},
		{"input too long", func(m *Manifest) { m.Load.Lengths.Input[0] = jobs.MaxLengthTokens + 1 }, "load.lengths.input[0]"},
		{"input twice", func(m *Manifest) { m.Load.Lengths.Input[2] = 128 }, "load.lengths.input[2]"},
		{"negative output", func(m *Manifest) { m.Load.Lengths.Output[0] = -5 }, "load.lengths.output[0]"},
		{"output twice", func(m *Manifest) { m.Load.Lengths.Output = []int{8, 8} }, "load.lengths.output[1]"},
		{"too many steps", func(m *Manifest) { m.Load.Lengths.Output = []int{1, 2, 3, 4, 5, 6} }, "load.lengths"},
		{"concurrency", func(m *Manifest) { m.Load.Concurrency = 5000 }, "load.concurrency"},
		{"rate", func(m *Manifest) { m.Load.Rate = -1 }, "load.rate"},
		{"scorer", func(m *Manifest) { m.Scorer = "exact" }, "scorer"},
		{"lengths elsewhere", func(m *Manifest) { m.Load.Profile = jobs.LoadConcurrency }, "load.lengths"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := Decode(strings.NewReader(lengthSweepYAML))
			if err != nil {
				t.Fatal(err)
			}
			tc.change(&m)
			errs := m.Validate()
			for _, e := range errs {
				if e.Path == tc.path && e.Message != "" {
					return
				}
			}
			t.Errorf("want an error at %s, got %v", tc.path, errs)
		})
	}
}

// FuzzLengthSweep: whatever lengths a manifest gives, Decode and Validate
// answer with messages naming a field, and a length sweep that validates
// has 1 to MaxLengthSteps distinct steps of bounded lengths, each label
// reading back as itself.
func FuzzLengthSweep(f *testing.F) {
	f.Add("{input: [128, 512, 2048, 8192], output: [128]}", 4)
	f.Add("{input: [1, 131072]}", 0)
	f.Add("{input: [0, -1, 1e9], output: [.nan]}", -3)
	f.Add("{input: 5}", 1)
	f.Add("{input: [\"x\"], output: {a: 1}}", 2)
	f.Add("[1, 2]", 1)
	f.Fuzz(func(t *testing.T, lengths string, conc int) {
		in := "name: n\ndataset: 1\ntargets: [{model: m/a, runtime: sim, hardware: cpu}]\nsampling: {max_tokens: 8}\n" +
			"load: {profile: length-sweep, concurrency: " + strconv.Itoa(conc) + ", lengths: " + lengths + "}\n"
		m, err := Decode(strings.NewReader(in))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		errs := m.Validate()
		for _, fe := range errs {
			if fe.Message == "" || fe.Path == "" {
				t.Fatalf("a validation error without a message or a field: %+v", fe)
			}
		}
		if len(errs) > 0 {
			return
		}
		steps := m.Load.Lengths.Steps()
		if len(steps) < 1 || len(steps) > jobs.MaxLengthSteps {
			t.Fatalf("a valid length sweep of %d steps", len(steps))
		}
		seen := map[jobs.LengthStep]bool{}
		for _, s := range steps {
			if s.Input < 1 || s.Input > jobs.MaxLengthTokens || s.Output < 0 || s.Output > jobs.MaxLengthTokens || seen[s] {
				t.Fatalf("a valid length sweep's step %+v (steps %+v)", s, steps)
			}
			seen[s] = true
			if back, ok := jobs.ParseLengthPhase(s.Phase()); !ok || back != s {
				t.Fatalf("step %+v reads back as %+v", s, back)
			}
		}
	})
}

// TestParseLengths: the form's comma-separated lengths, each fault at its
// entry.
func TestParseLengths(t *testing.T) {
	t.Parallel()
	got, errs := ParseLengths(" 128, 512 ,2048", "load.lengths.input")
	if len(errs) > 0 || !slices.Equal(got, []int{128, 512, 2048}) {
		t.Errorf("got %v, %v", got, errs)
	}
	if got, errs := ParseLengths("  ", "p"); got != nil || errs != nil {
		t.Errorf("empty text: %v, %v", got, errs)
	}
	_, errs = ParseLengths("128, x, 2.5", "load.lengths.output")
	if len(errs) != 2 || errs[0].Path != "load.lengths.output[1]" || errs[1].Path != "load.lengths.output[2]" {
		t.Errorf("faults %v", errs)
	}
}

// FuzzParseLengths: whatever is typed, the form's lengths come back as
// numbers or as messages naming the entry, never both missing.
func FuzzParseLengths(f *testing.F) {
	for _, s := range []string{"128, 512", "", ",", "1,,2", "-5, 99999999999999999999", "\x00", strings.Repeat("1,", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, errs := ParseLengths(text, "load.lengths.input")
		for _, e := range errs {
			if e.Message == "" || !strings.HasPrefix(e.Path, "load.lengths.input") {
				t.Fatalf("a fault without a message or its field: %+v", e)
			}
		}
		if strings.TrimSpace(text) != "" && len(got) == 0 && len(errs) == 0 {
			t.Fatalf("%q gave neither lengths nor faults", text)
		}
		if len(got)+len(errs) > 100 && len(errs) != 1 {
			t.Fatalf("%q: %d lengths and %d faults", text, len(got), len(errs))
		}
	})
}
