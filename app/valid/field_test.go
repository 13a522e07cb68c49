package valid_test

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/ruckus/ruckus/app/valid"
)

// TestFieldCopiesAndBounds: a value up to MaxFieldLen comes back whole, a
// longer one cut to it, and never in the caller's buffer.
func TestFieldCopiesAndBounds(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, valid.MaxFieldLen, valid.MaxFieldLen + 1, 4 * valid.MaxFieldLen} {
		buf := []byte(strings.Repeat("x", n))
		in := unsafe.String(unsafe.SliceData(buf), len(buf)) // a string over a reused buffer, as Fiber's are
		got := valid.Field(in)
		if want := min(n, valid.MaxFieldLen); len(got) != want {
			t.Errorf("Field of %d bytes: %d bytes, want %d", n, len(got), want)
		}
		if n > 0 && unsafe.StringData(got) == unsafe.SliceData(buf) {
			t.Errorf("Field of %d bytes shares the caller's buffer", n)
		}
	}
}
