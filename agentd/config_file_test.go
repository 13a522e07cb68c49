package main

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
