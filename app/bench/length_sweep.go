package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseLengths reads a length sweep's lengths as the form takes them:
// token counts separated by commas ("128, 512, 2048"); empty text is no
// lengths. What is not a whole number is refused at path[i]; whether the
// numbers are in range is the manifest's to check.
func ParseLengths(text, path string) ([]int, Errors) {
	var out []int
	var errs Errors
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	parts := strings.Split(text, ",")
	if len(parts) > 100 {
		errs.Say(path, "manifest.lengths_many", "Max", 100)
		return nil, errs
	}
	for i, part := range parts {
		part = strings.TrimSpace(part)
		n, err := strconv.Atoi(part)
		if err != nil {
			errs.Say(fmt.Sprintf("%s[%d]", path, i), "form_err.not_whole", "Value", strconv.Quote(part))
			continue
		}
		out = append(out, n)
	}
	return out, errs
}
