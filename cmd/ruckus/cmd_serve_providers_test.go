package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The server's provider table: built in without a file, the file's
// providers added, a bad file refused naming the setting and the field.
func TestReadProviders(t *testing.T) {
	p, err := readProviders("")
	if err != nil || strings.Join(p.Names(), ",") != "anthropic,openai" {
		t.Fatalf("built in: %v %v", p.Names(), err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "providers.yaml")
	if err := os.WriteFile(good, []byte("providers:\n  groq: {base_url: https://api.groq.com/openai/v1, api_key_env: GROQ_API_KEY, dialect: openai}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := readProviders(good); err != nil || p["groq"].APIKeyEnv != "GROQ_API_KEY" || len(p) != 3 {
		t.Fatalf("file: %v %v", p, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("providers:\n  groq: {base_url: https://api.groq.com/openai/v1, dialect: gemini}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readProviders(bad); err == nil || !strings.Contains(err.Error(), "RUCKUS_PROVIDERS_FILE "+bad+": providers.groq (line 2): dialect \"gemini\"") {
		t.Fatalf("bad file: %v", err)
	}
	if _, err := readProviders(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "RUCKUS_PROVIDERS_FILE") {
		t.Fatalf("missing file: %v", err)
	}
}
