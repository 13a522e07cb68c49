package judge

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/ruckus/ruckus/app/score"
)

// MaxFieldBytes bounds each text put into a judge prompt (the question,
// an answer, the reference); longer ones are cut and marked, so one long
// item cannot make a prompt no judge accepts.
const MaxFieldBytes = 16 << 10

// Clip bounds a text put into a prompt.
func Clip(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= MaxFieldBytes {
		return s
	}
	cut := MaxFieldBytes
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "\n[… cut: the text goes on]"
}

// Question is the text of an item's request as a judge reads it: a
// completion's prompt, a single message's content, or a conversation as
// "role: content" turns.
func Question(request json.RawMessage) string {
	var req struct {
		Body struct {
			Prompt   json.RawMessage `json:"prompt"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		} `json:"body"`
	}
	if json.Unmarshal(request, &req) != nil {
		return ""
	}
	if len(req.Body.Messages) == 0 {
		return text(req.Body.Prompt)
	}
	if len(req.Body.Messages) == 1 {
		return text(req.Body.Messages[0].Content)
	}
	var b strings.Builder
	for i, m := range req.Body.Messages {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "%s: %s", m.Role, text(m.Content))
	}
	return b.String()
}

// text reads a content value: a string, or a list of parts whose text
// parts are joined (images and other parts are left out).
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	var list []string // a completion prompt given as a list
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, "\n")
	}
	return ""
}

// Reference is an item's reference as a judge reads it: the reference,
// or the acceptable answers one per line.
func Reference(raw json.RawMessage) string {
	refs := score.References(raw)
	switch len(refs) {
	case 0:
		return ""
	case 1:
		return refs[0]
	}
	return "Any of these is right:\n- " + strings.Join(refs, "\n- ")
}

// Request is a judge item's request: a chat completion with the system
// prompt and the rendered template, in the OpenAI batch shape items are
// stored in.
func Request(system, user string) (json.RawMessage, error) {
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	return json.Marshal(map[string]any{
		"method": "POST", "url": "/v1/chat/completions",
		"body": map[string]any{"messages": []msg{{"system", system}, {"user", user}}},
	})
}

// SimRating is what the simulated runtime answers as a judge grading an
// answer on lo..hi (docs/simulated-runtime.md#the-simulated-judge).
// right is the simulated model's own right or wrong for the item, when
// the judged answer came from the simulated runtime: right gets the top
// of the scale, wrong the bottom, so the judge agrees with the scorer the
// answer was written for. Without it (answers from elsewhere) the rating
// follows the answer's token F1 against the reference; without a
// reference (creativity, safety), a rating fixed by the answer's text.
// Simulated, and labelled as such wherever the run shows.
func SimRating(answer, reference string, right *bool, lo, hi int) string {
	hasRef := strings.TrimSpace(reference) != ""
	var frac float64
	why := "The answer has no reference to compare with; judged on its own."
	switch {
	case hasRef && right != nil && *right:
		frac, why = 1, "The answer is the right one: it agrees with the reference."
	case hasRef && right != nil:
		frac, why = 0, "The answer is wrong: it does not agree with the reference."
	case hasRef:
		frac = score.TokenF1(answer, reference)
		why = fmt.Sprintf("Compared with the reference, the answer's words overlap it by %.0f %% (token F1).", 100*frac)
	default:
		h := fnv.New32a()
		_, _ = h.Write([]byte(answer))
		frac = float64(h.Sum32()%1000) / 999
	}
	r := lo + int(math.Round(frac*float64(hi-lo)))
	return fmt.Sprintf("%s\n\nRating: [[%d]]", why, r)
}

// SimPair is what the simulated runtime answers as a judge comparing two
// answers shown in this order. With the simulated model's right or wrong
// for both (rightFirst, rightSecond), a right answer beats a wrong one and
// two alike tie; otherwise the one closer to the reference (token F1)
// wins, equal ones tie; without a reference, a tie.
func SimPair(first, second, reference string, rightFirst, rightSecond *bool) string {
	if strings.TrimSpace(reference) == "" {
		return "Without a reference both answers are taken as equally good.\n\n[[C]]"
	}
	if rightFirst != nil && rightSecond != nil {
		switch a, b := *rightFirst, *rightSecond; {
		case a && !b:
			return "Assistant A's answer agrees with the reference and assistant B's does not.\n\n[[A]]"
		case b && !a:
			return "Assistant B's answer agrees with the reference and assistant A's does not.\n\n[[B]]"
		case a:
			return "Both answers agree with the reference.\n\n[[C]]"
		}
		return "Neither answer agrees with the reference.\n\n[[C]]"
	}
	a, b := score.TokenF1(first, reference), score.TokenF1(second, reference)
	why := fmt.Sprintf("Against the reference, assistant A's answer scores %.2f and assistant B's %.2f (token F1).", a, b)
	switch {
	case a > b:
		return why + "\n\n[[A]]"
	case b > a:
		return why + "\n\n[[B]]"
	}
	return why + "\n\n[[C]]"
}
