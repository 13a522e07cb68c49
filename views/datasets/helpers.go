package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/i18n"
)

func humanBytes(ctx context.Context, n int64) string {
	switch {
	case n >= 1<<30:
		return i18n.Num(ctx, float64(n)/(1<<30), 1) + " GiB"
	case n >= 1<<20:
		return i18n.Num(ctx, float64(n)/(1<<20), 1) + " MiB"
	case n >= 1<<10:
		return i18n.Num(ctx, float64(n)/(1<<10), 1) + " KiB"
	}
	return i18n.Int(ctx, n) + " B"
}

func lineLabel(ctx context.Context, line int) string {
	if line == 0 {
		return i18n.T(ctx, "datasets.line_file")
	}
	return fmt.Sprint(line)
}

func errorSummary(ctx context.Context, s UploadState) string {
	if s.ErrorCount > len(s.Errors) {
		return i18n.T(ctx, "datasets.problems_first", "N", s.ErrorCount, "Listed", len(s.Errors))
	}
	return i18n.N(ctx, "datasets.problems", s.ErrorCount)
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
