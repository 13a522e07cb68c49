package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Suites whose test programs Ruckus assembles.
const (
	SuiteHumanEval = "humaneval"
	SuiteMBPP      = "mbpp"
)

// Truncation modes for a completion before it is assembled.
const (
	// TruncateNone takes the completion as it is, as human-eval's own
	// evaluation does (human_eval/evaluation.py passes sample["completion"]
	// unchanged to check_correctness).
	TruncateNone = "none"
	// TruncateStopWords cuts the completion at the first of its suite's
	// stop words, as bigcode-evaluation-harness does
	// (Task._stop_at_stop_token with the stop_words of
	// bigcode_eval/tasks/humaneval.py and bigcode_eval/tasks/mbpp.py).
	TruncateStopWords = "stop_words"
)

// stopWords are bigcode-evaluation-harness's per suite:
// bigcode_eval/tasks/humaneval.py GeneralHumanEval.__init__ and
// bigcode_eval/tasks/mbpp.py MBPP.__init__.
var stopWords = map[string][]string{
	SuiteHumanEval: {"\nclass", "\ndef", "\n#", "\n@", "\nprint", "\nif", "\n```", "<file_sep>"},
	SuiteMBPP:      {"\nclass", "\nassert", "\n\"\"\"", "\nprint", "\nif", "\n<|/", "\n```"},
}

// StopWords returns the stop words TruncateStopWords cuts at for suite.
func StopWords(suite string) []string { return append([]string(nil), stopWords[suite]...) }

// Truncate applies mode to a completion of suite: the text before the
// earliest stop word, or the completion unchanged.
func Truncate(suite, mode, completion string) string {
	if mode != TruncateStopWords {
		return completion
	}
	cut := len(completion)
	for _, w := range stopWords[suite] {
		if i := strings.Index(completion, w); i >= 0 && i < cut {
			cut = i
		}
	}
	return completion[:cut]
}

// Task is what a suite's reference keeps for execution: HumanEval's
// {"task_id","test","entry_point",…} with the prompt of its request, or
// MBPP's {"task_id","text","code","test_list","test_setup_code",…}.
type Task struct {
	Suite      string
	TaskID     string
	Prompt     string // HumanEval: the prompt the completion continues
	Test       string // HumanEval: the check function
	EntryPoint string // HumanEval
	Canonical  string // HumanEval's canonical_solution, MBPP's code
	SetupCode  string // MBPP's test_setup_code
	TestList   []string
}

// ErrNotExecutable is an item whose reference is neither suite's.
var ErrNotExecutable = errors.New("the item's reference has neither an entry_point (HumanEval) nor a test_list (MBPP)")

// ParseTask reads an item's stored reference (and, for HumanEval, the
// prompt its request sent): HumanEval is recognised by entry_point, MBPP
// by test_list. want, when not empty, is the suite the scorer names; a
// reference of the other suite is refused.
func ParseTask(reference []byte, prompt, want string) (Task, error) {
	var r struct {
		TaskID     json.RawMessage `json:"task_id"`
		Test       *string         `json:"test"`
		EntryPoint *string         `json:"entry_point"`
		Canonical  *string         `json:"canonical_solution"`
		Code       *string         `json:"code"`
		TestList   []string        `json:"test_list"`
		SetupCode  *string         `json:"test_setup_code"`
	}
	if err := json.Unmarshal(reference, &r); err != nil {
		return Task{}, fmt.Errorf("reference: %w", err)
	}
	t := Task{TaskID: strings.Trim(string(r.TaskID), `"`)}
	switch {
	case r.EntryPoint != nil:
		if r.Test == nil {
			return Task{}, errors.New(`reference: a HumanEval item needs "test"`)
		}
		t.Suite, t.Prompt, t.Test, t.EntryPoint = SuiteHumanEval, prompt, *r.Test, *r.EntryPoint
		if r.Canonical != nil {
			t.Canonical = *r.Canonical
		}
	case r.TestList != nil:
		t.Suite, t.TestList = SuiteMBPP, r.TestList
		if r.SetupCode != nil {
			t.SetupCode = *r.SetupCode
		}
		if r.Code != nil {
			t.Canonical = *r.Code
		}
	default:
		return Task{}, ErrNotExecutable
	}
	if want != "" && want != t.Suite {
		return Task{}, fmt.Errorf("the scorer is %s but the item is a %s item", want, t.Suite)
	}
	return t, nil
}

// Program assembles the test program of a completion as the suite's own
// harness does:
//
//   - HumanEval, openai/human-eval human_eval/execution.py
//     (unsafe_execute): prompt + completion + "\n" + test + "\n" +
//     "check(" + entry_point + ")";
//   - MBPP, google-research mbpp as lm-eval-harness and bigcode run it:
//     the code, then test_setup_code, then the asserts of test_list, one
//     per line (bigcode_eval/tasks/custom_metrics/code_eval.py joins
//     candidate + "\n" + the reference, and bigcode_eval/tasks/mbpp.py's
//     reference is "\n".join(test_list)).
func (t Task) Program(completion string) string {
	switch t.Suite {
	case SuiteHumanEval:
		return t.Prompt + completion + "\n" + t.Test + "\n" + "check(" + t.EntryPoint + ")"
	case SuiteMBPP:
		return completion + "\n" + t.SetupCode + "\n" + strings.Join(t.TestList, "\n")
	}
	return completion
}
