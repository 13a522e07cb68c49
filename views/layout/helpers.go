package layout

import "encoding/json"

// csrfHeader makes htmx send the CSRF token with every request it issues.
func csrfHeader(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}
