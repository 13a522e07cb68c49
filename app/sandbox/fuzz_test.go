package sandbox_test

import (
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/sandbox"
)

// ParseTask reads references from users' datasets: it never panics, and
// what it accepts assembles into a program that holds the completion and
// ends as the suite's harness ends it.
func FuzzParseTask(f *testing.F) {
	f.Add(`{"task_id":"HumanEval/0","test":"def check(c):\n    assert c(1) == 2","entry_point":"f"}`, "def f(x):\n", "    return x + 1\n", "")
	f.Add(`{"task_id":2,"text":"t","code":"def f(): pass","test_list":["assert f() is None"],"test_setup_code":""}`, "", "def f():\n    return None\n", "mbpp")
	f.Add(`{"entry_point":"f"}`, "", "", "humaneval")
	f.Add(`{"test_list":null}`, "", "", "exec")
	f.Add(`[1,2]`, "", "", "")
	f.Fuzz(func(t *testing.T, ref, prompt, completion, want string) {
		task, err := sandbox.ParseTask([]byte(ref), prompt, want)
		if err != nil {
			return
		}
		p := task.Program(completion)
		if !strings.Contains(p, completion) {
			t.Fatalf("the program lost the completion")
		}
		switch task.Suite {
		case sandbox.SuiteHumanEval:
			if !strings.HasPrefix(p, prompt) || !strings.HasSuffix(p, "check("+task.EntryPoint+")") {
				t.Fatalf("a HumanEval program not prompt + … + check(entry_point): %q", p)
			}
		case sandbox.SuiteMBPP:
			if !strings.HasPrefix(p, completion) {
				t.Fatalf("an MBPP program not starting with the completion: %q", p)
			}
		default:
			t.Fatalf("suite %q", task.Suite)
		}
		for _, mode := range []string{sandbox.TruncateNone, sandbox.TruncateStopWords} {
			if c := sandbox.Truncate(task.Suite, mode, completion); !strings.HasPrefix(completion, c) {
				t.Fatalf("truncation is not a prefix")
			}
		}
	})
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct{ suite, mode, in, want string }{
		{sandbox.SuiteHumanEval, sandbox.TruncateNone, "    return 1\ndef g():\n", "    return 1\ndef g():\n"},
		{sandbox.SuiteHumanEval, sandbox.TruncateStopWords, "    return 1\ndef g():\n", "    return 1"},
		{sandbox.SuiteHumanEval, sandbox.TruncateStopWords, "    return 1\n\nif __name__ == '__main__':\n", "    return 1\n"},
		{sandbox.SuiteHumanEval, sandbox.TruncateStopWords, "    x = 1\n    # note\n    return x\n", "    x = 1\n    # note\n    return x\n"},
		{sandbox.SuiteHumanEval, sandbox.TruncateStopWords, "    return 1\n# tests\n", "    return 1"},
		{sandbox.SuiteMBPP, sandbox.TruncateStopWords, "def f():\n    return 1\nassert f() == 1\n", "def f():\n    return 1"},
		{sandbox.SuiteMBPP, sandbox.TruncateStopWords, "def f():\n    return 1\ndef g():\n    pass", "def f():\n    return 1\ndef g():\n    pass"},
		{sandbox.SuiteMBPP, sandbox.TruncateStopWords, "def f():\n    return 1\n```\n", "def f():\n    return 1"},
	} {
		if got := sandbox.Truncate(tc.suite, tc.mode, tc.in); got != tc.want {
			t.Errorf("%s %s %q: %q, want %q", tc.suite, tc.mode, tc.in, got, tc.want)
		}
	}
}

func TestProgramAssembly(t *testing.T) {
	he, err := sandbox.ParseTask([]byte(`{"task_id":"HumanEval/9","test":"def check(candidate):\n    assert candidate(1) == 2\n","entry_point":"inc"}`), "def inc(x):\n", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := he.Program("    return x + 1"), "def inc(x):\n    return x + 1\ndef check(candidate):\n    assert candidate(1) == 2\n\ncheck(inc)"; got != want {
		t.Errorf("HumanEval program %q, want %q", got, want)
	}
	mb, err := sandbox.ParseTask([]byte(`{"task_id":11,"text":"t","code":"c","test_list":["assert f(1) == 1","assert f(2) == 2"],"test_setup_code":"import math","challenge_test_list":[]}`), "ignored", "mbpp")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mb.Program("def f(x):\n    return x"), "def f(x):\n    return x\nimport math\nassert f(1) == 1\nassert f(2) == 2"; got != want {
		t.Errorf("MBPP program %q, want %q", got, want)
	}
	if _, err := sandbox.ParseTask([]byte(`{"task_id":11,"test_list":["assert True"]}`), "", "humaneval"); err == nil {
		t.Error("an MBPP item accepted by the humaneval scorer")
	}
	if _, err := sandbox.ParseTask([]byte(`{"answer":"4"}`), "", ""); err != sandbox.ErrNotExecutable {
		t.Errorf("a non-code item: %v", err)
	}
}
