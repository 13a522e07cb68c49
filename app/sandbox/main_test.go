package sandbox_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/ruckus/ruckus/app/sandbox"
)

func TestMain(m *testing.M) {
	if err := sandbox.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// newRunner is a runner with Debian's programs; a machine without them
// fails (make deps installs them).
func newRunner(t testing.TB) *sandbox.Runner {
	t.Helper()
	r := sandbox.NewRunner()
	if err := r.Check(); err != nil {
		t.Fatalf("%v (make deps installs them)", err)
	}
	return r
}
