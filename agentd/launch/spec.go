package launch

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/jobs"
)

// Defaults for a Spec's zero fields.
const (
	DefaultHost         = "127.0.0.1"
	DefaultReadyTimeout = 15 * time.Minute
	DefaultStopGrace    = 30 * time.Second
	DefaultTailBytes    = 64 << 10
	DefaultPollInterval = 250 * time.Millisecond
)

// Spec is one runtime to launch. Zero fields take the defaults above.
type Spec struct {
	// Runtime names a shipped template (see Runtimes). Another name needs
	// a Command or a Template.
	Runtime string `yaml:"runtime"`
	// Model is the name requests use: the adapter's, for an adapter.
	Model     string `yaml:"model"`
	ModelPath string `yaml:"model_path"`
	Modelfile string `yaml:"modelfile"`
	// Adapter, when set, launches Model as a LoRA adapter on a base
	// model: ModelPath is then the base's weights. Runtimes whose
	// template takes no adapter refuse it.
	Adapter *Adapter `yaml:"adapter"`
	// Host is the address the runtime listens on (127.0.0.1 by default);
	// agentd connects to loopback when it is 0.0.0.0 or ::.
	Host string `yaml:"host"`
	// Port 0 picks a free one.
	Port int `yaml:"port"`
	// Command replaces the template's argv; ExtraArgs are appended to it.
	Command   Argv `yaml:"command"`
	ExtraArgs Argv `yaml:"extra_args"`
	// Engine are the target's engine settings (the job's, checked against
	// jobs.EngineParams): Render appends the table's flags, in
	// --flag=value form, and environment entries for them after
	// ExtraArgs and Env, so that they win (docs/benchmarks.md#engine-settings).
	Engine jobs.Engine `yaml:"-"`
	// Env is added after the template's (KEY=VALUE, templates too). A PATH
	// here is also where the executable is looked up.
	Env []string `yaml:"env"`
	// ReadyPath replaces the template's.
	ReadyPath string `yaml:"ready_path"`
	// Template replaces the shipped template for Runtime altogether.
	Template *Template `yaml:"template"`
	// ReadyTimeout bounds the time from start to ready.
	ReadyTimeout time.Duration `yaml:"ready_timeout"`
	// StopGrace is the grace Stop gets when Start's context ends.
	StopGrace    time.Duration `yaml:"stop_grace"`
	PollInterval time.Duration `yaml:"poll_interval"`
	// LogPath receives the runtime's output (appended); empty keeps only
	// the in-memory tail.
	LogPath string `yaml:"log_path"`
	// TailBytes is the size of the in-memory tail.
	TailBytes int `yaml:"tail_bytes"`
	// WorkDir is the runtime's working directory, and where a Modelfile
	// is written (a temporary directory when empty).
	WorkDir string `yaml:"work_dir"`
}

// Adapter is a LoRA adapter to serve on a base model.
type Adapter struct {
	// Base is the base model's name (served under it, where the runtime
	// names the base apart from the adapter).
	Base string `yaml:"base"`
	// Path is the adapter's weights: a directory (vLLM, SGLang; a Hugging
	// Face id works there too) or a GGUF LoRA file (llama.cpp).
	Path string `yaml:"path"`
}

func (s Spec) withDefaults() Spec {
	if s.Host == "" {
		s.Host = DefaultHost
	}
	s.Host = strings.TrimSuffix(strings.TrimPrefix(s.Host, "["), "]")
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = DefaultReadyTimeout
	}
	if s.StopGrace <= 0 {
		s.StopGrace = DefaultStopGrace
	}
	if s.PollInterval <= 0 {
		s.PollInterval = DefaultPollInterval
	}
	if s.TailBytes <= 0 {
		s.TailBytes = DefaultTailBytes
	}
	return s
}

// template resolves the template the spec runs and the runtime's name.
func (s Spec) template() (Template, string, error) {
	var (
		t    Template
		name = s.Runtime
	)
	switch {
	case s.Template != nil:
		t = *s.Template
	default:
		var ok bool
		if t, name, ok = Lookup(s.Runtime); !ok {
			if len(s.Command) == 0 {
				return Template{}, "", fmt.Errorf("launch: unknown runtime %q (shipped: %s); give a command to run it",
					s.Runtime, strings.Join(Runtimes(), ", "))
			}
			t, name = genericTemplate(), s.Runtime
		}
	}
	if name == "" {
		name = "runtime"
	}
	if len(s.Command) > 0 {
		t.Command = s.Command
	}
	if s.ReadyPath != "" {
		t.ReadyPath = s.ReadyPath
	}
	if t.ReadyPath == "" {
		t.ReadyPath = genericTemplate().ReadyPath
	}
	return t, name, nil
}

// Argv is a command line. In YAML it is a list of arguments or one string;
// as a flag.Value each use appends one string's words. A string is split
// like a shell would split it — whitespace separates words, single quotes
// keep everything literally, double quotes and backslashes escape — but
// nothing is expanded, and a {{ … }} template action is one piece of a word
// whatever it contains.
type Argv []string

// UnmarshalYAML takes a sequence of strings or one string.
func (a *Argv) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		words, err := SplitCommand(n.Value)
		if err != nil {
			return err
		}
		*a = words
		return nil
	case yaml.SequenceNode:
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		*a = list
		return nil
	}
	return fmt.Errorf("line %d: want a command as a string or a list of arguments", n.Line)
}

// Set appends the words of s (flag.Value).
func (a *Argv) Set(s string) error {
	words, err := SplitCommand(s)
	if err != nil {
		return err
	}
	*a = append(*a, words...)
	return nil
}

// String is the command line, quoted where needed (flag.Value).
func (a *Argv) String() string {
	if a == nil {
		return ""
	}
	return formatArgv(*a)
}

var errUnterminated = errors.New("unterminated")

// SplitCommand splits a command line into words; see Argv.
func SplitCommand(s string) ([]string, error) {
	var (
		words []string
		word  strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case strings.HasPrefix(s[i:], "{{"):
			end := strings.Index(s[i+2:], "}}")
			if end < 0 {
				return nil, fmt.Errorf("launch: command %q: %w {{", s, errUnterminated)
			}
			word.WriteString(s[i : i+2+end+2])
			i += 2 + end + 2
			in = true
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("launch: command %q: %w single quote", s, errUnterminated)
			}
			word.WriteString(s[i+1 : i+1+end])
			i += end + 2
			in = true
		case c == '"':
			i++
			closed := false
			for i < len(s) {
				if s[i] == '"' {
					closed = true
					i++
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				word.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("launch: command %q: %w double quote", s, errUnterminated)
			}
			in = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("launch: command %q ends with a backslash", s)
			}
			word.WriteByte(s[i+1])
			i += 2
			in = true
		case c < 0x80 && unicode.IsSpace(rune(c)):
			if in {
				words = append(words, word.String())
				word.Reset()
				in = false
			}
			i++
		default:
			word.WriteByte(c)
			i++
			in = true
		}
	}
	if in {
		words = append(words, word.String())
	}
	return words, nil
}

// formatArgv writes argv for a log line, quoting what needs it.
func formatArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}
