package jobs

import (
	"regexp"
	"strconv"

	"github.com/ruckus/ruckus/app/i18n"
)

// MaxModelNameLen bounds a registry model name in bytes.
const MaxModelNameLen = 200

// modelNamePattern accepts Hugging Face ids (org/name) and plain local
// names such as Ollama's "llama3.2:1b". A name starts with a letter or a
// digit, so it can never be read as a command-line option, and holds no
// spaces, quotes or control characters.
var modelNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*(/[A-Za-z0-9._:-]+)?$`)

// CheckModelName reports why name cannot be a registry model name, or nil
// when it can. The server checks names when models are registered and
// benchmarks planned; agentd checks the name a job carries again before it
// reaches a runtime's command line, since the job comes from the database
// and a GPU node trusts nothing it did not check itself.
func CheckModelName(name string) error {
	switch {
	case name == "":
		return i18n.NewError("valid.model_name_empty")
	case len(name) > MaxModelNameLen:
		return i18n.NewError("valid.model_name_long", "Max", MaxModelNameLen)
	case !modelNamePattern.MatchString(name):
		return i18n.NewError("valid.model_name_bad", "Name", strconv.Quote(name))
	}
	return nil
}
