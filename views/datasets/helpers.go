package datasets

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func lineLabel(line int) string {
	if line == 0 {
		return "file"
	}
	return fmt.Sprint(line)
}

func errorSummary(s UploadState) string {
	if s.ErrorCount > len(s.Errors) {
		return fmt.Sprintf("%d problems; the first %d are listed.", s.ErrorCount, len(s.Errors))
	}
	if s.ErrorCount == 1 {
		return "1 problem:"
	}
	return fmt.Sprintf("%d problems:", s.ErrorCount)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// promptOf shows the text a person would recognise from a request: the
// last message's content or the prompt, else the JSON.
func promptOf(req json.RawMessage) string {
	var r struct {
		Body struct {
			Prompt   any `json:"prompt"`
			Messages []struct {
				Content any `json:"content"`
			} `json:"messages"`
		} `json:"body"`
	}
	if json.Unmarshal(req, &r) == nil {
		if s, ok := r.Body.Prompt.(string); ok {
			return s
		}
		if n := len(r.Body.Messages); n > 0 {
			if s, ok := r.Body.Messages[n-1].Content.(string); ok {
				return s
			}
		}
	}
	return string(req)
}

func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
