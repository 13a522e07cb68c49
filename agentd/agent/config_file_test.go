package agent

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/agentd/sim"
)

// TestConfigFileErrorsNameTheSetting: a typo or a wrong type in the
// --config file is named by its key and line, never by a Go type.
func TestConfigFileErrorsNameTheSetting(t *testing.T) {
	t.Parallel()
	goType := regexp.MustCompile(`[a-z]+\.[A-Z][A-Za-z]+`)
	for _, tc := range []struct{ yaml, want string }{
		{"database_url: postgres://x\nnmae: a\n", `nmae: unknown field "nmae" (line 2)`},
		{"database_url: postgres://x\nheartbeat: [1]\n", "heartbeat: must be a duration such as 30s or 1m30s (got a list) (line 2)"},
	} {
		path := filepath.Join(t.TempDir(), "agentd.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := parseRunFlags([]string{"--config", path}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want it to say %q", tc.yaml, err, tc.want)
		}
		if err != nil && (goType.MatchString(err.Error()) || strings.Contains(err.Error(), "type ")) {
			t.Errorf("%q: %v names a Go type", tc.yaml, err)
		}
	}
}

// TestSimConfigFileErrorsNameTheSetting: the same for agentd sim's file,
// whether its keys stand alone or sit under sim:.
func TestSimConfigFileErrorsNameTheSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want string }{
		{"batch: 2\nfault_500: 0.1\n", `fault_500: unknown field "fault_500" (line 2)`},
		{"name: a\nsim:\n  batch: many\n", `sim.batch: must be a whole number (got "many") (line 3)`},
	} {
		path := filepath.Join(t.TempDir(), "sim.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := sim.DefaultConfig()
		err := readSimConfig(path, &cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want it to say %q", tc.yaml, err, tc.want)
		}
	}
}

// Through PgBouncer an agent needs its key; it comes from --key-file (which
// wins) or $RUCKUS_AGENT_KEY, and a value that is not a key is refused
// without being echoed.
func TestAgentKeySetting(t *testing.T) {
	const key = "rka_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	if err := os.WriteFile(file, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("hunter2-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--database-url", "postgres://x", "--name", "a", "--pgbouncer"}
	t.Setenv("RUCKUS_AGENT_KEY", "")
	if _, err := parseRunFlags(base, io.Discard); err == nil || !strings.Contains(err.Error(), "RUCKUS_AGENT_KEY or --key-file") {
		t.Errorf("--pgbouncer without a key: %v", err)
	}
	c, err := parseRunFlags(append(base, "--key-file", file), io.Discard)
	if err != nil || c.Key != key {
		t.Errorf("--key-file: %q %v", c.Key, err)
	}
	if _, err := parseRunFlags(append(base, "--key-file", bad), io.Discard); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a file without a key: %v", err)
	}
	t.Setenv("RUCKUS_AGENT_KEY", key)
	if c, err := parseRunFlags(base, io.Discard); err != nil || c.Key != key {
		t.Errorf("$RUCKUS_AGENT_KEY: %q %v", c.Key, err)
	}
	if c, err := parseRunFlags(base[:4], io.Discard); err != nil || c.Key != key {
		t.Errorf("a key without --pgbouncer is kept (and harmless): %q %v", c.Key, err)
	}
}
