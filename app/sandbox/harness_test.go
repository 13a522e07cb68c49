package sandbox_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ruckus/ruckus/app/sandbox"
)

type humanEvalItem struct {
	TaskID     string `json:"task_id"`
	Prompt     string `json:"prompt"`
	Canonical  string `json:"canonical_solution"`
	Test       string `json:"test"`
	EntryPoint string `json:"entry_point"`
}

// humanEval reads the shared HumanEval release (never copied into the
// repository).
func humanEval(t testing.TB) []humanEvalItem {
	t.Helper()
	f, err := os.Open("../../../shared/datasets/humaneval/HumanEval.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var items []humanEvalItem
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var it humanEvalItem
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	if len(items) != 164 {
		t.Fatalf("%d HumanEval items, want 164", len(items))
	}
	return items
}

// task turns an item into the Task its stored reference gives.
func task(t testing.TB, it humanEvalItem) sandbox.Task {
	t.Helper()
	ref, _ := json.Marshal(map[string]string{"task_id": it.TaskID, "test": it.Test, "entry_point": it.EntryPoint, "canonical_solution": it.Canonical})
	tk, err := sandbox.ParseTask(ref, it.Prompt, sandbox.SuiteHumanEval)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// runAll runs each item's program, two at a time, and counts the classes.
func runAll(t *testing.T, r *sandbox.Runner, programs []string) ([]sandbox.Result, map[sandbox.Class]int) {
	t.Helper()
	out := make([]sandbox.Result, len(programs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, p := range programs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = r.Run(context.Background(), p)
		}()
	}
	wg.Wait()
	counts := map[sandbox.Class]int{}
	for _, res := range out {
		counts[res.Class]++
	}
	return out, counts
}

func TestHumanEvalCanonicalPass(t *testing.T) {
	r := newRunner(t)
	items := humanEval(t)
	programs := make([]string, len(items))
	for i, it := range items {
		programs[i] = task(t, it).Program(it.Canonical)
	}
	res, counts := runAll(t, r, programs)
	for i, x := range res {
		if x.Class != sandbox.Passed {
			t.Errorf("%s: %s %s\n%s", items[i].TaskID, x.Class, x.Reason, x.StderrTail)
		}
	}
	t.Logf("canonical solutions: %v", counts)
}

// mutate changes a canonical solution; ok is false when the mutation does
// not apply to it.
type mutation struct {
	name string
	f    func(string) (string, bool)
}

var swaps = [][2]string{{" + ", " - "}, {" - ", " + "}, {" < ", " >= "}, {" > ", " <= "}, {" == ", " != "}, {" <= ", " > "}, {" >= ", " < "}, {" * ", " + "}}

var mutations = []mutation{
	{"body replaced by return None", func(s string) (string, bool) { return "    return None\n", true }},
	{"first operator swapped", func(s string) (string, bool) {
		best, at := -1, [2]string{}
		for _, sw := range swaps {
			if i := strings.Index(s, sw[0]); i >= 0 && (best < 0 || i < best) {
				best, at = i, sw
			}
		}
		if best < 0 {
			return s, false
		}
		return s[:best] + at[1] + s[best+len(at[0]):], true
	}},
	{"last return value changed", func(s string) (string, bool) {
		i := strings.LastIndex(s, "return ")
		if i < 0 {
			return s, false
		}
		end := strings.IndexByte(s[i:], '\n')
		if end < 0 {
			end = len(s) - i
		}
		expr := s[i+len("return ") : i+end]
		return s[:i] + "return _mutated(" + expr + ")" + s[i+end:] + "\ndef _mutated(v):\n    return [v] if not isinstance(v, list) else v + [None]\n", true
	}},
}

// Mutated canonical solutions fail: none of a mutation's programs may
// pass more often than the tests' blind spots allow (a mutation the tests
// cannot see, such as a swapped operator on equal operands, passes).
func TestHumanEvalMutatedFail(t *testing.T) {
	r := newRunner(t)
	items := humanEval(t)
	for _, m := range mutations {
		var programs []string
		var ids []string
		for _, it := range items {
			body, ok := m.f(it.Canonical)
			if !ok {
				continue
			}
			programs = append(programs, task(t, it).Program(body))
			ids = append(ids, it.TaskID)
		}
		res, counts := runAll(t, r, programs)
		failed := len(programs) - counts[sandbox.Passed]
		t.Logf("%s: %d of %d programs fail (%d of 164 items mutated): %v", m.name, failed, len(programs), len(programs), counts)
		var passed []string
		for i, x := range res {
			if x.Class == sandbox.Passed {
				passed = append(passed, ids[i])
			}
		}
		// Replacing the body by return None leaves nothing of the
		// solution: every item's tests must see it.
		if m.name == "body replaced by return None" && failed != len(programs) {
			t.Errorf("%s: %v pass", m.name, passed)
		}
		// The others must fail for the great majority.
		if failed*10 < len(programs)*8 {
			t.Errorf("%s: only %d of %d fail; passing: %v", m.name, failed, len(programs), passed)
		}
	}
}
