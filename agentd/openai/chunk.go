package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeChunk decodes one streamed chunk into c exactly as
// json.Unmarshal(data, c) would, errors included.
//
// A stream carries one chunk per token, so decoding them is most of what
// the client spends per token; encoding/json validates every chunk in one
// pass and then decodes it by reflection in another. fastChunk decodes the
// usual shapes in a single pass and leaves everything else (escaped
// strings, keys that match a field only case-insensitively, values of an
// unexpected type, invalid JSON) to encoding/json, which then gives its
// own result and error. FuzzFastChunk checks that whatever fastChunk
// accepts, encoding/json decodes to the same chunk.
//
// prev, when not nil, is the stream's previous chunk: its id and object,
// which every chunk of a stream repeats, are reused rather than allocated
// again.
func decodeChunk(data []byte, c, prev *chunk) error {
	if fastChunk(data, c, prev) {
		return nil
	}
	*c = chunk{}
	return json.Unmarshal(data, c)
}

// fastChunk decodes data into c, reporting false when it leaves the chunk
// to encoding/json (c is then partly filled).
func fastChunk(data []byte, c, prev *chunk) bool {
	d := chunkDecoder{b: data, prev: prev}
	d.ws()
	if !d.chunk(c) {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

// maxSkipDepth bounds the nesting of values fastChunk skips; deeper ones
// go to encoding/json, which has its own bound.
const maxSkipDepth = 64

// chunkDecoder reads JSON from b at i. Every method reports false on
// anything it does not handle, leaving the decision to encoding/json.
type chunkDecoder struct {
	b     []byte
	i     int
	depth int
	prev  *chunk // may be nil
}

func (d *chunkDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *chunkDecoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// literal consumes word (true, false, null) when it comes next.
func (d *chunkDecoder) literal(word string) bool {
	if bytes.HasPrefix(d.b[d.i:], []byte(word)) {
		d.i += len(word)
		return true
	}
	return false
}

// object reads an object, calling field at each key with the decoder on
// its value. A key with escapes is left to encoding/json.
func (d *chunkDecoder) object(field func(key []byte) bool) bool {
	if d.peek() != '{' {
		return false
	}
	d.i++
	d.ws()
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		d.ws()
		key, ok := d.plainString()
		if !ok {
			return false
		}
		d.ws()
		if d.peek() != ':' {
			return false
		}
		d.i++
		d.ws()
		if !field(key) {
			return false
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array, calling elem with the decoder on each element.
func (d *chunkDecoder) array(elem func() bool) bool {
	if d.peek() != '[' {
		return false
	}
	d.i++
	d.ws()
	if d.peek() == ']' {
		d.i++
		return true
	}
	for {
		d.ws()
		if !elem() {
			return false
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// known records key in seen when it is one of keys (the fields of the
// object being read) exactly, and reports whether fastChunk may go on: not
// for a key seen twice (encoding/json lets the last one win, merging
// objects) nor for an unknown key that matches a field case-insensitively,
// as encoding/json also matches them.
func known(key []byte, seen *uint8, keys ...string) bool {
	for i, k := range keys {
		if string(key) == k {
			if *seen&(1<<i) != 0 {
				return false
			}
			*seen |= 1 << i
			return true
		}
	}
	for _, k := range keys {
		if bytes.EqualFold(key, []byte(k)) {
			return false
		}
	}
	return true
}

// plainString reads a string without escapes, in valid UTF-8: encoding/json
// keeps those bytes as they are.
func (d *chunkDecoder) plainString() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start, ascii := d.i+1, true
	for i := start; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			s := d.b[start:i]
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// stringField reads a string into *dst; null leaves it as it is.
func (d *chunkDecoder) stringField(dst *string) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.plainString()
	if ok {
		*dst = string(s)
	}
	return ok
}

// repeatedField is stringField for a value that usually repeats last,
// the previous chunk's: then last itself is kept, not a new copy.
func (d *chunkDecoder) repeatedField(dst *string, last func(*chunk) string) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.plainString()
	switch {
	case !ok:
		return false
	case d.prev != nil && string(s) == last(d.prev):
		*dst = last(d.prev)
	default:
		*dst = string(s)
	}
	return true
}

// numberField reads a number into *dst as encoding/json does for a
// float64; null leaves it as it is.
func (d *chunkDecoder) numberField(dst *float64) bool {
	if d.literal("null") {
		return true
	}
	start := d.i
	if !d.number() {
		return false
	}
	v, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	if err != nil {
		return false
	}
	*dst = v
	return true
}

// number reads a number as JSON's grammar has it.
func (d *chunkDecoder) number() bool {
	digits := func() int {
		n := 0
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.peek() == '-' {
		d.i++
	}
	switch c := d.peek(); {
	case c == '0':
		d.i++
	case c >= '1' && c <= '9':
		digits()
	default:
		return false
	}
	if d.peek() == '.' {
		d.i++
		if digits() == 0 {
			return false
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.i++
		if c := d.peek(); c == '+' || c == '-' {
			d.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// skip reads any value, checking it is valid JSON.
func (d *chunkDecoder) skip() bool {
	switch c := d.peek(); c {
	case '"':
		return d.skipString()
	case '{', '[':
		if d.depth++; d.depth > maxSkipDepth {
			return false
		}
		var ok bool
		if c == '{' {
			ok = d.object(func([]byte) bool { return d.skip() })
		} else {
			ok = d.array(d.skip)
		}
		d.depth--
		return ok
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	return d.number()
}

// skipString reads a string, escapes included.
func (d *chunkDecoder) skipString() bool {
	if d.peek() != '"' {
		return false
	}
	for i := d.i + 1; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			i++
			if i >= len(d.b) {
				return false
			}
			switch d.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d.b) {
					return false
				}
				for _, h := range d.b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				i += 4
			default:
				return false
			}
		}
	}
	return false
}

// raw reads any value into *dst, copied: the event's bytes are reused.
func (d *chunkDecoder) raw(dst *json.RawMessage) bool {
	start := d.i
	if !d.skip() {
		return false
	}
	*dst = bytes.Clone(d.b[start:d.i])
	return true
}

func (d *chunkDecoder) chunk(c *chunk) bool {
	var seen uint8
	return d.object(func(key []byte) bool {
		if !known(key, &seen, "id", "object", "message", "choices", "usage", "error") {
			return false
		}
		switch string(key) {
		case "id":
			return d.repeatedField(&c.ID, func(p *chunk) string { return p.ID })
		case "object":
			return d.repeatedField(&c.Object, func(p *chunk) string { return p.Object })
		case "message":
			return d.raw(&c.Message)
		case "error":
			return d.raw(&c.Error)
		case "choices":
			if d.literal("null") {
				c.Choices = nil
				return true
			}
			c.Choices = make([]choice, 0, 1)
			return d.array(func() bool {
				c.Choices = append(c.Choices, choice{})
				if d.literal("null") {
					return true
				}
				return d.choice(&c.Choices[len(c.Choices)-1])
			})
		case "usage":
			if d.literal("null") {
				c.Usage = nil
				return true
			}
			c.Usage = &usage{}
			return d.usage(c.Usage)
		}
		return d.skip()
	})
}

func (d *chunkDecoder) choice(ch *choice) bool {
	var seen uint8
	return d.object(func(key []byte) bool {
		if !known(key, &seen, "delta", "message", "text", "finish_reason") {
			return false
		}
		switch string(key) {
		case "delta":
			return d.message(&ch.Delta)
		case "message":
			return d.message(&ch.Message)
		case "text":
			return d.stringField(&ch.Text)
		case "finish_reason":
			if d.literal("null") {
				ch.FinishReason = nil
				return true
			}
			var s string
			if !d.stringField(&s) {
				return false
			}
			ch.FinishReason = &s
			return true
		}
		return d.skip()
	})
}

func (d *chunkDecoder) message(dst **message) bool {
	if d.literal("null") {
		*dst = nil
		return true
	}
	m := &message{}
	*dst = m
	var seen uint8
	return d.object(func(key []byte) bool {
		if !known(key, &seen, "content", "reasoning_content", "reasoning", "tool_calls") {
			return false
		}
		switch string(key) {
		case "content":
			return d.stringField(&m.Content)
		case "reasoning_content":
			return d.stringField(&m.ReasoningContent)
		case "reasoning":
			return d.stringField(&m.Reasoning)
		case "tool_calls":
			if d.literal("null") {
				m.ToolCalls = nil
				return true
			}
			return false // rare: left to encoding/json
		}
		return d.skip()
	})
}

func (d *chunkDecoder) usage(u *usage) bool {
	var seen uint8
	return d.object(func(key []byte) bool {
		if !known(key, &seen, "prompt_tokens", "completion_tokens") {
			return false
		}
		switch string(key) {
		case "prompt_tokens":
			return d.numberField(&u.PromptTokens)
		case "completion_tokens":
			return d.numberField(&u.CompletionTokens)
		}
		return d.skip()
	})
}
