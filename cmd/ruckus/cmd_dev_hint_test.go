package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/pgtest"
)

// `ruckus dev` prints the DATABASE_URL and the commands that give the
// command line a token; run as printed (through a shell), they create a
// token for the first administrator.
func TestDevPrintsHowToReachTheCommandLine(t *testing.T) {
	pool := pgtest.NewDB(t)
	url := pgtest.URL(t, pool)
	t.Setenv("RUCKUS_PASSWORD_COST", "4")
	t.Setenv("DATABASE_URL", url)
	if code, out, errOut := runCLI(t, "user", "create", "--email", "admin@ruckus.local", "--admin"); code != 0 {
		t.Fatalf("user create: %d %q %q", code, out, errOut)
	}
	var b bytes.Buffer
	devCLIHint(&b, "localhost:8080", url, "")
	hint := b.String()
	if !strings.Contains(hint, "export RUCKUS_URL=http://localhost:8080\n") {
		t.Fatalf("hint:\n%s", hint)
	}
	// The shell reads the exports back as printed.
	exports := regexp.MustCompile(`(?m)^  export DATABASE_URL=.*$`).FindString(hint)
	got, err := exec.Command("sh", "-c", strings.TrimSpace(exports)+`; printf %s "$DATABASE_URL"`).Output()
	if err != nil || string(got) != url {
		t.Fatalf("DATABASE_URL as the shell reads %q: %q (%v)", exports, got, err)
	}
	m := regexp.MustCompile(`\$\(bin/ruckus token create --email '([^']+)' --name cli\)`).FindStringSubmatch(hint)
	if m == nil {
		t.Fatalf("no token command in:\n%s", hint)
	}
	t.Setenv("DATABASE_URL", string(got))
	code, out, errOut := runCLI(t, "token", "create", "--email", m[1], "--name", "cli")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), auth.TokenPrefix) {
		t.Fatalf("the printed token command: %d %q %q", code, out, errOut)
	}
	b.Reset()
	devCLIHint(&b, "localhost:8080", "postgres://x/y?a='b'", "root@example.com")
	if !strings.Contains(b.String(), `export DATABASE_URL='postgres://x/y?a='\''b'\'''`) || !strings.Contains(b.String(), "'root@example.com'") {
		t.Errorf("quoting: %s", b.String())
	}
}
