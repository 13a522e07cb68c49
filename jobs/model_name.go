package jobs

import (
	"fmt"
	"regexp"
	"strconv"
)

// MaxModelNameLen bounds a registry model name in bytes.
const MaxModelNameLen = 200

// modelNamePattern accepts Hugging Face ids (org/name) and plain local
// names such as Ollama's "llama3.2:1b". A name starts with a letter or a
// digit, so it can never be read as a command-line option, and holds no
// spaces, quotes or control characters.
var modelNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*(/[A-Za-z0-9._:-]+)?$`)

// CheckModelName reports why name cannot be a registry model name (an
// *Error), or nil when it can. The server checks names when models are
// registered and benchmarks planned; agentd checks the name a job carries
// again before it reaches a runtime's command line, since the job comes
// from the database and a GPU node trusts nothing it did not check itself.
func CheckModelName(name string) error {
	switch {
	case name == "":
		return codeError("the model name is empty", "valid.model_name_empty")
	case len(name) > MaxModelNameLen:
		return codeError(fmt.Sprintf("the model name is longer than %d characters", MaxModelNameLen),
			"valid.model_name_long", "Max", MaxModelNameLen)
	case !modelNamePattern.MatchString(name):
		q := strconv.Quote(name)
		return codeError(q+" is not a model id such as Qwen/Qwen2.5-7B-Instruct (a letter or digit first, then letters, digits, . _ : - and at most one /)",
			"valid.model_name_bad", "Name", q)
	}
	return nil
}
