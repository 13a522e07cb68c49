package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/jobs"
)

// testdata/fewshot_lmeval.json holds k-shot prompts made by
// lm-evaluation-harness's own few-shot code (api/task.py's
// fewshot_context and build_qa_turn, api/utils.py's Message and
// delimiters, api/samplers.py's first_n and seeded default samplers; see
// its "source"), run with Debian's python3 over seeded MMLU documents (40,
// four subjects; first_n within each subject) and ARC documents (60 and
// 15, so both of random.sample's strategies are drawn; seeds 1234, 7 and
// 2⁴⁰+3; k 1, 3, 5 and 25). Ruckus's prompts must be the same, byte for
// byte, item after item.
func TestFewShotPromptsAreLMEvalsOwn(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/fewshot_lmeval.json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	shotsOf := func(name string) []dataset.Shot {
		var docs []json.RawMessage
		if err := json.Unmarshal(v[name+"_docs"], &docs); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, d := range docs {
			b.Write(d)
			b.WriteByte('\n')
		}
		p := dataset.NewParser(&b, dataset.Limits{})
		var shots []dataset.Shot
		for {
			it, ok := p.Next()
			if !ok {
				break
			}
			var s dataset.Shot
			if err := json.Unmarshal(it.Shot, &s); err != nil {
				t.Fatalf("%s item %d: shot %s: %v", name, it.Index, it.Shot, err)
			}
			shots = append(shots, s)
		}
		if p.ErrorCount() > 0 || len(shots) != len(docs) {
			t.Fatalf("%s: %d of %d items, %v", name, len(shots), len(docs), p.Errors())
		}
		return shots
	}
	sets := map[string][]dataset.Shot{"mmlu": shotsOf("mmlu"), "arc": shotsOf("arc"), "arc_small": shotsOf("arc_small")}
	checked, cases := 0, 0
	for key, rawPrompts := range v {
		parts := strings.Split(key, "/")
		if len(parts) < 2 {
			continue
		}
		var want []*string
		if err := json.Unmarshal(rawPrompts, &want); err != nil {
			t.Fatal(err)
		}
		shots := sets[parts[0]]
		k, _ := strconv.Atoi(parts[1])
		var seed int64
		if len(parts) == 3 {
			seed, _ = strconv.ParseInt(parts[2], 10, 64)
		}
		ex, err := FewShotExamples(shots, len(shots), k, seed, parts[0] == "mmlu")
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		cases++
		for i, w := range want {
			if w == nil {
				continue
			}
			examples := make([]dataset.Shot, len(ex[i]))
			for j, e := range ex[i] {
				if e == i {
					t.Fatalf("%s item %d is its own example", key, i)
				}
				examples[j] = shots[e]
			}
			var req struct {
				Body struct {
					Messages []struct{ Content string } `json:"messages"`
				} `json:"body"`
			}
			if err := json.Unmarshal(dataset.FewShotRequest(shots[i], examples), &req); err != nil || len(req.Body.Messages) != 1 {
				t.Fatalf("%s item %d: %v", key, i, err)
			}
			if got := req.Body.Messages[0].Content; got != *w {
				t.Errorf("%s item %d:\n%q\nwant\n%q", key, i, got, *w)
				continue
			}
			checked++
		}
	}
	if cases < 16 || checked < 700 {
		t.Fatalf("%d settings, %d prompts checked", cases, checked)
	}
	t.Logf("%d settings, %d prompts equal to lm-eval's", cases, checked)
}

// Python's random.Random(seed).sample(range(n), k), as Debian's CPython
// 3.11 gives it: random.Random(1234).sample(range(60), 4) draws by
// rejecting repeats, random.Random(7).sample(range(15), 4) from a
// shrinking pool.
func TestPyRandomSample(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		seed uint64
		n, k int
		want []int
	}{
		{1234, 60, 4, []int{49, 28, 7, 0}},
		{7, 15, 4, []int{5, 2, 6, 10}},
	} {
		if got := newPyRandom(c.seed).sample(c.n, c.k); !slices.Equal(got, c.want) {
			t.Errorf("Random(%d).sample(range(%d), %d) = %v, want %v", c.seed, c.n, c.k, got, c.want)
		}
	}
}

// The manifest's few-shot blocks are checked field by field; one target
// at two k is two targets, at the same k one twice.
func TestManifestFewShotIsValidated(t *testing.T) {
	t.Parallel()
	m, err := Decode(strings.NewReader(`name: s
dataset: 1
fewshot: {k: 26}
targets:
  - {model: acme/a, runtime: sim, hardware: cpu}
  - {model: acme/a, runtime: sim, hardware: cpu, fewshot: {k: 5, seed: -1}}
  - {model: acme/a, runtime: sim, hardware: cpu, fewshot: {k: 3}}
  - {model: acme/a, runtime: sim, hardware: cpu, fewshot: {k: 3, seed: 1234}}
sampling: {max_tokens: 8}
load: {profile: sequential}
`))
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, e := range m.Validate() {
		paths[e.Path] = true
	}
	for _, p := range []string{"fewshot.k", "targets[1].fewshot.seed", "targets[3]"} {
		if !paths[p] {
			t.Errorf("no error at %s in %v", p, m.Validate())
		}
	}
	if len(paths) != 3 {
		t.Errorf("errors at %v, want 3", paths)
	}
	if k, seed, set := fewShotOf(m, m.Targets[2]); k != 3 || seed != DefaultFewShotSeed || set != "" {
		t.Errorf("targets[2] runs %d-shot with seed %d", k, seed)
	}
	if _, err := Decode(strings.NewReader("name: s\nfewshot: {k: 1, sed: 2}\n")); err == nil {
		t.Error("a misspelt fewshot field was accepted")
	}
}

// The form's few-shot fields: one k, several, and every way of getting
// them wrong named at its field.
func TestParseFewShot(t *testing.T) {
	t.Parallel()
	fs, errs := ParseFewShot("0, 5", "7")
	if len(errs) > 0 || len(fs) != 2 || fs[0].K != 0 || fs[1].K != 5 || *fs[1].Seed != 7 {
		t.Fatalf("0, 5 seed 7: %+v %v", fs, errs)
	}
	if fs, errs := ParseFewShot("", ""); len(fs) != 0 || len(errs) != 0 {
		t.Errorf("empty: %+v %v", fs, errs)
	}
	for _, c := range []struct{ k, seed, path, msg string }{
		{"x", "", "fewshot.k", `"x" is not a whole number`},
		{"26", "", "fewshot.k", "from 0 to 25"},
		{"1,1", "", "fewshot.k", "1 is given twice"},
		{"0,1,2,3,4,5,6", "", "fewshot.k", "at most 6"},
		{"1", "-1", "fewshot.seed", "from 0"},
		{"1", "9007199254740992", "fewshot.seed", "from 0 to 9007199254740991"},
	} {
		if _, errs := ParseFewShot(c.k, c.seed); len(errs) != 1 || errs[0].Path != c.path || !strings.Contains(errs[0].Message, c.msg) {
			t.Errorf("k %q seed %q: %v, want %s: %s", c.k, c.seed, errs, c.path, c.msg)
		}
	}
}

// FuzzParseFewShot: any form input gives settings the manifest accepts
// or errors, never both, never a panic.
func FuzzParseFewShot(f *testing.F) {
	for _, s := range [][2]string{{"5", ""}, {"0,5", "1234"}, {" 3 ,", "x"}, {"-1", "-0"}, {"99999999999999999999", "1e3"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, k, seed string) {
		fs, errs := ParseFewShot(k, seed)
		if len(fs) > 0 && len(errs) > 0 {
			t.Fatalf("%q %q: settings %+v and errors %v", k, seed, fs, errs)
		}
		for _, s := range fs {
			m := Manifest{Name: "n", Dataset: DatasetRef{ID: 1}, FewShot: &s,
				Targets: []Target{{Model: "a/b", Runtime: "sim", Hardware: "cpu"}}, Sampling: jobs.Sampling{MaxTokens: 8}}
			for _, e := range m.Validate() {
				if strings.HasPrefix(e.Path, "fewshot") {
					t.Fatalf("%q %q: parsed %+v, which the manifest refuses: %v", k, seed, s, e)
				}
			}
		}
	})
}
