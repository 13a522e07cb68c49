package sim

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// fillerWords make up the answers: plainly not a model's output.
var fillerWords = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod
tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation
ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit
esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui
officia deserunt mollit anim id est laborum simulated`)

// filler writes the answer one token (one word) at a time, in sentences,
// from its own random source so the words depend only on the answer's
// seed.
type filler struct {
	r        *rand.Rand
	n        int  // tokens written
	left     int  // words left in the sentence
	spaceIn1 bool // whether the first token starts with a space
	// script, when set, is the answer to send instead of filler, token
	// by token (see scriptTokens); filler follows if more are asked for.
	script []string
}

// next appends k tokens to b. Each token is one whitespace-separated word
// with its leading space, so the answer's word count is its token count.
func (f *filler) next(b *strings.Builder, k int) {
	for range k {
		if f.n < len(f.script) {
			b.WriteString(f.script[f.n])
			f.n++
			continue
		}
		if f.n > 0 || f.spaceIn1 {
			b.WriteByte(' ')
		}
		w := fillerWords[f.r.IntN(len(fillerWords))]
		if f.left == 0 { // a new sentence
			f.left = 4 + f.r.IntN(11)
			b.WriteString(strings.ToUpper(w[:1]))
			w = w[1:]
		}
		b.WriteString(w)
		f.left--
		if f.left == 0 {
			b.WriteByte('.')
		}
		f.n++
	}
}

// request is what the simulation reads of a completion request; other
// fields are accepted and ignored.
type request struct {
	Model               string          `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N *int `json:"n"`
	// IgnoreEOS (vLLM's sampling parameter) answers until max_tokens, as
	// a length sweep's and a synthetic item's forced output lengths ask.
	IgnoreEOS bool `json:"ignore_eos"`
	// Answer is the text to answer with instead of filler: the answer the
	// Ruckus server decided for this item (from its reference and the
	// model's simulated accuracy), which agentd adds to the request. Not
	// an OpenAI field; other clients leave it out and get filler.
	Answer      string   `json:"ruckus_sim_answer"`
	Seed        *int64   `json:"seed"`
	Temperature *float64 `json:"temperature"`
}

// chatPromptChars counts the characters of a chat request's messages:
// string contents, or the text parts of part lists.
func chatPromptChars(raw json.RawMessage) (chars int, err error) {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return 0, errors.New("messages must be an array of {role, content} objects")
	}
	if len(msgs) == 0 {
		return 0, errors.New("messages must not be empty")
	}
	for _, m := range msgs {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			chars += utf8.RuneCountInString(s)
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			for _, p := range parts {
				chars += utf8.RuneCountInString(p.Text)
			}
		}
	}
	return chars, nil
}

// completionPromptSize measures a completions prompt: a string or token
// ids, or a list holding one of either (several prompts at once are not
// served).
func completionPromptSize(raw json.RawMessage) (chars, tokens int, err error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return utf8.RuneCountInString(s), 0, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		return 0, len(ids), nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && len(list) == 1 {
		if json.Unmarshal(list[0], &s) == nil {
			return utf8.RuneCountInString(s), 0, nil
		}
		if json.Unmarshal(list[0], &ids) == nil {
			return 0, len(ids), nil
		}
	}
	if len(list) > 1 {
		return 0, 0, errors.New("prompt: several prompts in one request are not served by the simulated runtime")
	}
	return 0, 0, errors.New("prompt must be a string, a list of token ids, or a list of one of either")
}

// promptTokens estimates a prompt's length: about four characters per
// token, at least one.
func promptTokens(chars, ids int) int { return max((chars+3)/4+ids, 1) }

// AnswerField is the request field that carries a scripted answer.
const AnswerField = "ruckus_sim_answer"

// maxScriptTokens bounds the tokens of a scripted answer.
const maxScriptTokens = 1 << 16

// scriptTokens splits a scripted answer into tokens as filler counts them:
// each is one whitespace-separated word with the whitespace before it, so
// the answer streams word by word and joins back to itself (trailing
// whitespace aside).
func scriptTokens(text string) []string {
	var out []string
	start := 0
	inWord := false
	for i, r := range text {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if inWord && space {
			out = append(out, text[start:i])
			start = i
			if len(out) == maxScriptTokens {
				return out
			}
		}
		inWord = !space
	}
	if inWord {
		out = append(out, text[start:])
	}
	return out
}
