package sandbox

import "testing"

// A fork bomb's children write their tracebacks into one stderr at once:
// the refused fork is still the exception that ended it when another
// child's traceback header or frames come last.
func TestClassifyTextPassesOverInterleavedTracebacks(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		class  Class
		reason string
	}{
		{"Traceback (most recent call last):\n  File \"<stdin>\", line 3, in <module>\nBlockingIOError: [Errno 11] Resource temporarily unavailable\n", Killed, "nproc"},
		{"BlockingIOError: [Errno 11] Resource temporarily unavailable\n  File \"<stdin>\", line 3, in <module>\nBlockingIOError: [Errno 11] Resource temporarily unavailable\nTraceback (most recent call last):\n", Killed, "nproc"},
		{"Traceback (most recent call last):\n  File \"x.py\", line 1\nIndexError: list index out of range\nTraceback (most recent call last):\n  File \"x.py\", line 2\n", Exception, "IndexError"},
		{"AssertionError\n\n", Failed, ""},
		{"Traceback (most recent call last):\n", Exception, ""},
		{"", Exception, ""},
	} {
		if class, reason := classifyText(tc.stderr); class != tc.class || reason != tc.reason {
			t.Errorf("%q: %s (%s), want %s (%s)", tc.stderr, class, reason, tc.class, tc.reason)
		}
	}
}
