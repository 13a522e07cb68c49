package dataset

import "encoding/json"

// Few-shot prompts beyond the standard suites: any item with a prompt and
// a reference can be a solved example (docs/quality.md#few-shot-on-gsm8k-and-on-any-prompt-with-a-reference).
//
//   - GSM8K is lm-evaluation-harness's gsm8k task (tasks/gsm8k/gsm8k.yaml):
//     doc_to_text "Question: {{question}}\nAnswer:", doc_to_target
//     "{{answer}}" (the whole worked answer, "#### 18" and all), the
//     target delimiter " ", examples separated by "\n\n", and its
//     generation stops ("Question:", "</s>", "<|im_end|>").
//   - A simple line with a string "prompt" (or one user message) and a
//     string or number "reference" (or "answer") and no choices is
//     written in the same "Question: …\nAnswer: …" form, stopping at
//     "Question:".
//
// The item's own 0-shot request is unchanged (the question as the one
// chat message); k-shot requests carry the whole prompt as one chat
// message with the stops, as lm-eval sends a chat model its few-shot
// context (--apply_chat_template without --fewshot_as_multiturn).

// gsm8kStops are lm-eval's gsm8k generation stops (generation_kwargs.until).
var gsm8kStops = []string{"Question:", "</s>", "<|im_end|>"}

// plainStops end a plain item's k-shot answer where the model would start
// the next question.
var plainStops = []string{"Question:"}

// questionAnswerShot is the "Question: …\nAnswer: …" pieces of an item.
func questionAnswerShot(question, target string, stop []string) *Shot {
	return &Shot{Query: "Question: " + question + "\nAnswer:", Answer: " " + target, Stop: stop, Question: question}
}

// plainShot is a simple line's pieces from its raw prompt (a string, as
// checked) and raw reference; none when the reference is neither a
// string nor a number.
func plainShot(prompt, ref []byte) *Shot {
	q, _ := decodeString(prompt)
	target, ok := decodeString(ref)
	if !ok {
		if !isNumberLiteral(ref) {
			return nil
		}
		target = string(ref)
	}
	if target == "" {
		return nil
	}
	return questionAnswerShot(q, target, plainStops)
}

// isNumberLiteral reports a raw JSON number (its first byte decides: the
// line is valid JSON).
func isNumberLiteral(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

// ShotOf reads the pieces of a stored GSM8K or simple item from its
// request and reference (they are not kept beside them, unlike the
// suites'): the question is the request's one user message, the target
// the reference's answer. nil when the item has none (another format, a
// conversation, choices, no answer).
func ShotOf(fm Format, request, reference []byte) *Shot {
	if fm != FormatGSM8K && fm != FormatSimple {
		return nil
	}
	var req struct {
		URL  string `json:"url"`
		Body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		} `json:"body"`
	}
	var ref map[string]json.RawMessage
	if json.Unmarshal(request, &req) != nil || json.Unmarshal(reference, &ref) != nil || req.URL != urlChat ||
		len(req.Body.Messages) != 1 || req.Body.Messages[0].Role != "user" || !isString(req.Body.Messages[0].Content) {
		return nil
	}
	ans := ref["answer"]
	if absent(ans) {
		return nil
	}
	if fm == FormatGSM8K {
		q, _ := decodeString(req.Body.Messages[0].Content)
		target, ok := decodeString(ans)
		if !ok {
			target = string(ans)
		}
		return questionAnswerShot(q, target, gsm8kStops)
	}
	if ref["choices"] != nil {
		return nil
	}
	return plainShot(req.Body.Messages[0].Content, ans)
}

// promptPieces reports whether the upload's own prompts need GSM8K's and
// simple lines' pieces while the file is read (shots or exemplars);
// otherwise a benchmark reads them back later (ShotOf).
func (p *Parser) promptPieces() bool { return p.shots > 0 || p.exemplars != nil }
