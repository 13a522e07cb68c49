package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaultsAndEnvironment(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("", env(map[string]string{
		"DATABASE_URL":       "postgres://u:p@localhost:5432/ruckus",
		"RUCKUS_SESSION_TTL": "2h",
		"RUCKUS_ADDR":        "127.0.0.1:9000",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:9000" || cfg.SessionTTL != 2*time.Hour || cfg.LogLevel != "info" || cfg.PasswordCost != 12 {
		t.Fatalf("unexpected config: %+v", cfg)
	}
}

func TestLoadRejectsBadSettingsNamingEach(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"missing database", map[string]string{}, []string{"DATABASE_URL: is required"}},
		{"not a postgres url", map[string]string{"DATABASE_URL": "mysql://x"}, []string{"DATABASE_URL: must be a PostgreSQL URL"}},
		{"bad addr", map[string]string{"DATABASE_URL": "postgres://x", "RUCKUS_ADDR": "8080"}, []string{"RUCKUS_ADDR: must be host:port", `(got "8080")`}},
		{"bad level", map[string]string{"DATABASE_URL": "postgres://x", "RUCKUS_LOG_LEVEL": "loud"}, []string{"RUCKUS_LOG_LEVEL: must be one of debug, info, warn, error"}},
		{"not a duration", map[string]string{"DATABASE_URL": "postgres://x", "RUCKUS_SESSION_TTL": "forever"}, []string{`RUCKUS_SESSION_TTL: "forever" is not a duration`}},
		{"too short", map[string]string{"DATABASE_URL": "postgres://x", "RUCKUS_SESSION_TTL": "1m"}, []string{"RUCKUS_SESSION_TTL: must be at least 5m"}},
		{"not a number", map[string]string{"DATABASE_URL": "postgres://x", "RUCKUS_PASSWORD_COST": "high"}, []string{`RUCKUS_PASSWORD_COST: "high" is not a whole number`}},
		{"bad metrics address", map[string]string{"DATABASE_URL": "postgres://x", "RUCKUS_METRICS_ADDR": "nope"}, []string{`RUCKUS_METRICS_ADDR: must be host:port or :port, such as 127.0.0.1:9464, or off (got "nope")`}},
		{"attestation key not 32 bytes", map[string]string{"DATABASE_URL": "postgres://x", "RUCKUS_ATTESTATION_KEY": "c2hvcnQ="}, []string{"RUCKUS_ATTESTATION_KEY: must be 32 bytes in base64"}},
		{"negative rate", map[string]string{"DATABASE_URL": "postgres://x", "RUCKUS_API_RATE_PER_USER": "-1"}, []string{"RUCKUS_API_RATE_PER_USER: must be at least 0"}},
		{"bad email and short password, both reported, password not echoed", map[string]string{
			"DATABASE_URL": "postgres://x", "RUCKUS_ADMIN_EMAIL": "root", "RUCKUS_ADMIN_PASSWORD": "secret1",
		}, []string{"RUCKUS_ADMIN_EMAIL: must be an email address", "RUCKUS_ADMIN_PASSWORD: must be at least 8 characters long"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load("", env(tc.env))
			var cerr *config.Error
			if !errors.As(err, &cerr) {
				t.Fatalf("err = %v, want *config.Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret1") {
				t.Error("the error message echoes a password")
			}
		})
	}
}

func TestLoadYAMLFileWithEnvironmentOverride(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "ruckus.yaml")
	if err := os.WriteFile(path, []byte("database_url: postgres://file/db\naddr: :7000\nsession_ttl: 48h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, env(map[string]string{"RUCKUS_ADDR": ":7001"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != "postgres://file/db" || cfg.Addr != ":7001" || cfg.SessionTTL != 48*time.Hour {
		t.Fatalf("file + env = %+v", cfg)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("database_url: postgres://x\nsesion_ttl: 1h\nsession_ttl: [1]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = config.Load(bad, env(nil))
	if err == nil || !strings.Contains(err.Error(), "sesion_ttl ("+bad+" line 2): unknown setting") ||
		!strings.Contains(err.Error(), "session_ttl ("+bad+" line 3): must be a single value") {
		t.Fatalf("bad file error = %v", err)
	}
	if _, err := config.Load(filepath.Join(dir, "missing.yaml"), env(nil)); err == nil || !strings.Contains(err.Error(), "RUCKUS_CONFIG: cannot open") {
		t.Fatalf("missing file error = %v", err)
	}
}
