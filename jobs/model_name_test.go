package jobs_test

import (
	"strings"
	"testing"

	"github.com/ruckus/ruckus/jobs"
)

func TestCheckModelName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "llama3.2:1b", "ruckus/tiny-llama",
		"m", "7b", "mistralai/Mistral-7B-Instruct-v0.3", strings.Repeat("a", jobs.MaxModelNameLen)} {
		if err := jobs.CheckModelName(ok); err != nil {
			t.Errorf("CheckModelName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "--trust-remote-code", "-m", "-", "/etc/passwd", "a/b/c", "a b", "a\x00b", "a\nb",
		"org/", ".hidden", "_x", "a;rm", "$(id)", "a'b", `a"b`, "ünïcode", strings.Repeat("a", jobs.MaxModelNameLen+1)} {
		if err := jobs.CheckModelName(bad); err == nil {
			t.Errorf("CheckModelName(%q) = nil, want an error", bad)
		}
	}
}

// FuzzCheckModelName: a name that is accepted can never be read as a
// command-line option or hold what a command line or a file would split
// on, and stays within its length.
func FuzzCheckModelName(f *testing.F) {
	for _, s := range []string{"Qwen/Qwen2.5-7B-Instruct", "--trust-remote-code", "a/b", "llama3.2:1b", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if jobs.CheckModelName(name) != nil {
			return
		}
		if name == "" || len(name) > jobs.MaxModelNameLen || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") ||
			strings.ContainsAny(name, " \t\r\n\x00'\"$;`\\") || strings.Count(name, "/") > 1 {
			t.Fatalf("accepted %q", name)
		}
	})
}
