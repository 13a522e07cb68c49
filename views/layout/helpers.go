package layout

import "encoding/json"

// csrfHeader makes htmx send the CSRF token with every request it issues.
func csrfHeader(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}

// Invalid is the aria-invalid value for a form field: "true" when errs has
// a message for it, empty (no attribute) otherwise.
func Invalid(errs map[string]string, field string) string {
	if _, bad := errs[field]; bad {
		return "true"
	}
	return ""
}
