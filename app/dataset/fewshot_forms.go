package dataset

// Few-shot prompts beyond the standard suites: any item with a prompt and
// a reference can be a solved example (docs/quality.md#few-shot-on-gsm8k-and-on-any-prompt-with-a-reference).
//
//   - GSM8K is lm-evaluation-harness's gsm8k task (tasks/gsm8k/gsm8k.yaml):
//     doc_to_text "Question: {{question}}\nAnswer:", doc_to_target
//     "{{answer}}" (the whole worked answer, "#### 18" and all), the
//     target delimiter " ", examples separated by "\n\n", and its
//     generation stops ("Question:", "</s>", "<|im_end|>").
//   - A simple line with a string "prompt" and a string or number
//     "reference" (or "answer") and no choices is written in the same
//     "Question: …\nAnswer: …" form, stopping at "Question:".
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
