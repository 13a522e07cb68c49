package jobs

import (
	"strings"
	"testing"
)

func TestReadProviders(t *testing.T) {
	p, err := ReadProviders(strings.NewReader(`providers:
  together: {base_url: https://api.together.xyz/v1, api_key_env: TOGETHER_API_KEY, dialect: openai}
  gateway: {base_url: http://10.0.0.5:8000, dialect: openai}
  anthropic: {base_url: https://anthropic.example/proxy, api_key_env: ANTHROPIC_KEY, dialect: anthropic}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Names(), ","); got != "anthropic,gateway,openai,together" {
		t.Fatalf("names %s", got)
	}
	if p["together"] != (Provider{Name: "together", BaseURL: "https://api.together.xyz/v1", APIKeyEnv: "TOGETHER_API_KEY", Dialect: DialectOpenAI}) {
		t.Fatalf("together %+v", p["together"])
	}
	if p["anthropic"].BaseURL != "https://anthropic.example/proxy" || p["openai"] != DefaultProviders()["openai"] {
		t.Fatalf("replaced %+v, kept %+v", p["anthropic"], p["openai"])
	}
	if p, err := ReadProviders(strings.NewReader("")); err != nil || len(p) != 2 {
		t.Fatalf("empty file: %v %v", p, err)
	}
}

func TestReadProvidersRefuses(t *testing.T) {
	cases := map[string]string{
		"providers:\n  x: {base_url: ftp://a, dialect: openai}\n":     `providers.x (line 2): base_url "ftp://a"`,
		"providers:\n  X: {base_url: http://a, dialect: openai}\n":    `name "X"`,
		"providers:\n  vllm: {base_url: http://a, dialect: openai}\n": "a runtime agentd drives itself",
		// Names River's queues would refuse at insert.
		"providers:\n  together.ai: {base_url: http://a, dialect: openai}\n":           `name "together.ai"`,
		"providers:\n  foo-: {base_url: http://a, dialect: openai}\n":                  `name "foo-"`,
		"providers:\n  a--b: {base_url: http://a, dialect: openai}\n":                  `name "a--b"`,
		"providers:\n  x: {base_url: http://a, dialect: gemini}\n":                     `dialect "gemini": one of openai, anthropic`,
		"providers:\n  x: {base_url: http://a, dialect: openai, api_key_env: 'A B'}\n": `api_key_env "A B"`,
		"providers:\n  x: {base_url: http://a, dialect: openai, key: secret}\n":        "unknown field key",
		"providers:\n  x: {base_url: 'http://u:p@a', dialect: openai}\n":               "base_url",
		"providers: [x]\n":                       "providers is a mapping",
		"provider: {}\n":                         "field provider not found",
		strings.Repeat("#", MaxProvidersBytes+1): "larger than",
	}
	for in, want := range cases {
		_, err := ReadProviders(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.50q: want …%s…, got %v", in, want, err)
		}
	}
}

// FuzzReadProviders: any bytes either fail or give a table every entry of
// which passes its own check.
func FuzzReadProviders(f *testing.F) {
	f.Add([]byte("providers:\n  together: {base_url: https://api.together.xyz/v1, api_key_env: TOGETHER_API_KEY, dialect: openai}\n"))
	f.Add([]byte("providers: {a: {base_url: 'http://[::1]:8/x', dialect: anthropic}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadProviders(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		for _, e := range p {
			if err := CheckQueue(Queue("cpu", e.Name)); err != nil {
				t.Fatalf("provider %q accepted, but its queue is not River's: %v", e.Name, err)
			}
		}
		for name, pr := range p {
			if pr.Name != name || pr.Check() != nil {
				t.Fatalf("accepted %q: %+v", name, pr)
			}
		}
	})
}

// CheckQueue refuses what River's client would refuse at insert, so a
// plan names the problem instead of failing at launch.
func TestCheckQueue(t *testing.T) {
	for q, ok := range map[string]bool{
		"cpu_sim": true, "h100-80gb-hbm3-x1_vllm": true, "cpu_" + strings.Repeat("a", 40): true,
		"cpu_together.ai": false, "cpu_foo-": false, "cpu_a--b": false, "Cpu_sim": false,
		strings.Repeat("h", 60) + "_vllm": false,
	} {
		if err := CheckQueue(q); (err == nil) != ok {
			t.Errorf("CheckQueue(%q) = %v, want ok=%v", q, err, ok)
		}
	}
}
