package valid

import "strings"

// MaxFieldLen bounds a form field as typed, in bytes: nothing longer
// names a model, a runtime, a hardware profile or a scorer's option.
const MaxFieldLen = 256

// Field is a form value as typed, copied (the web framework reuses its
// buffers, so a value kept past the request must be a copy of its own)
// and cut to MaxFieldLen bytes.
func Field(s string) string {
	if len(s) > MaxFieldLen {
		s = s[:MaxFieldLen]
	}
	return strings.Clone(s)
}
