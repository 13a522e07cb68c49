package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Dialects a remote provider speaks.
const (
	// DialectOpenAI is OpenAI's chat completions API (POST
	// /v1/chat/completions, streamed chunks with choices[].delta), which
	// most hosted providers and every self-hosted runtime speak.
	DialectOpenAI = "openai"
	// DialectAnthropic is Anthropic's Messages API (POST /v1/messages,
	// streamed message_start / content_block_delta / message_delta events).
	DialectAnthropic = "anthropic"
)

// Dialects lists the dialects in the order the docs give them.
var Dialects = []string{DialectOpenAI, DialectAnthropic}

// Provider is a remote provider of models, written before the colon of a
// fleet's "provider:model" target. Its runs take the runtime named after
// it (so the queue is {hardware}_{name}), served black-box by agents
// started with `agentd run --provider NAME`, which read the base URL, the
// API key's environment variable and the dialect from the same table.
type Provider struct {
	Name string `yaml:"-" json:"name"`
	// BaseURL is the API's root, such as https://api.together.xyz/v1.
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKeyEnv names the environment variable holding the API key on
	// the agent's machine; the key itself is never in the table.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env"`
	// Dialect is DialectOpenAI or DialectAnthropic.
	Dialect string `yaml:"dialect" json:"dialect"`
}

// Providers is the provider table, by name.
type Providers map[string]Provider

// DefaultProviders are the providers every table has unless it replaces
// them: OpenAI and Anthropic themselves.
func DefaultProviders() Providers {
	return Providers{
		"openai":    {Name: "openai", BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY", Dialect: DialectOpenAI},
		"anthropic": {Name: "anthropic", BaseURL: "https://api.anthropic.com", APIKeyEnv: "ANTHROPIC_API_KEY", Dialect: DialectAnthropic},
	}
}

// Names lists the table's providers in order.
func (p Providers) Names() []string {
	out := make([]string, 0, len(p))
	for n := range p {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// MaxProvidersBytes bounds a provider table file; MaxProviders its entries.
const (
	MaxProvidersBytes = 64 << 10
	MaxProviders      = 100
	// MaxProviderName leaves a hardware profile 23 of a queue name's 64
	// characters.
	MaxProviderName = 40
)

var (
	// providerName is a runtime name as queues and agent grants take it:
	// River's queue names allow no dot, no doubled or trailing "-", and
	// the hardware profile takes part of their 64 characters.
	providerName = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	envName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// localRuntimes are runtimes agentd drives itself: no provider may take
// their names, or its runs would land in their queues.
var localRuntimes = []string{"sim", "vllm", "sglang", "tgi", "llama-cpp", "ollama"}

// ReadProviders reads a provider table file,
//
//	providers:
//	  together: {base_url: https://api.together.xyz/v1, api_key_env: TOGETHER_API_KEY, dialect: openai}
//
// on top of DefaultProviders (an entry named openai or anthropic replaces
// the built-in one). Every error names the provider and the field.
func ReadProviders(r io.Reader) (Providers, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxProvidersBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxProvidersBytes {
		return nil, fmt.Errorf("the provider table is larger than %d bytes", MaxProvidersBytes)
	}
	var file struct {
		Providers yaml.Node `yaml:"providers"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("the provider table: %w", err)
	}
	out := DefaultProviders()
	n := &file.Providers
	if n.Kind == 0 {
		return out, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: providers is a mapping of provider names to {base_url, api_key_env, dialect}", n.Line)
	}
	if len(n.Content)/2 > MaxProviders {
		return nil, fmt.Errorf("line %d: at most %d providers", n.Line, MaxProviders)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		var p Provider
		if err := decodeStrict(val, &p); err != nil {
			return nil, fmt.Errorf("providers.%s (line %d): %w", key.Value, key.Line, err)
		}
		p.Name = key.Value
		if err := p.Check(); err != nil {
			return nil, fmt.Errorf("providers.%s (line %d): %w", key.Value, key.Line, err)
		}
		out[p.Name] = p
	}
	return out, nil
}

// decodeStrict decodes a mapping node refusing unknown keys (yaml.v3's
// Node.Decode does not check them).
func decodeStrict(n *yaml.Node, p *Provider) error {
	if n.Kind != yaml.MappingNode {
		return errors.New("want a mapping {base_url, api_key_env, dialect}")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "base_url", "api_key_env", "dialect":
		default:
			return fmt.Errorf("unknown field %s (the fields are base_url, api_key_env, dialect)", k)
		}
	}
	return n.Decode(p)
}

// Check says what is wrong with a provider, naming the field.
func (p Provider) Check() error {
	switch {
	case !providerName.MatchString(p.Name) || len(p.Name) > MaxProviderName:
		return fmt.Errorf("name %q: lower-case letters and digits, words joined by single '-' (as River's queue names take them), at most %d characters", p.Name, MaxProviderName)
	case slices.Contains(localRuntimes, p.Name):
		return fmt.Errorf("name %q is a runtime agentd drives itself; choose another", p.Name)
	case !isHTTPURL(p.BaseURL):
		return fmt.Errorf("base_url %q: want http(s)://host[:port][/prefix]", p.BaseURL)
	case p.APIKeyEnv != "" && !envName.MatchString(p.APIKeyEnv):
		return fmt.Errorf("api_key_env %q: an environment variable's name such as TOGETHER_API_KEY", p.APIKeyEnv)
	case !slices.Contains(Dialects, p.Dialect):
		return fmt.Errorf("dialect %q: one of %s", p.Dialect, strings.Join(Dialects, ", "))
	}
	return nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && len(s) <= 2048 && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}
