package i18n

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// Message is a sentence of the catalogue kept as data: its key and its
// arguments as name/value pairs. Errors found in the app's library
// (validation, parsing) carry one, so the JSON API can answer the English
// text while a page words the same error in the reader's language. An
// argument that is itself a Message is worded in the same language as the
// sentence around it ("(got a list)" / "(erhalten: eine Liste)").
type Message struct {
	Key  string
	Args []any
}

// M returns the message key with its arguments given as name/value pairs:
// M("valid.at_least", "Min", 3).
func M(key string, args ...any) Message { return Message{Key: key, Args: args} }

// In words m in l's language.
func (m Message) In(l *Localizer) string {
	if len(m.Args) == 0 {
		return l.T(m.Key)
	}
	args := make([]any, len(m.Args))
	copy(args, m.Args)
	for i := 1; i < len(args); i += 2 {
		switch sub := args[i].(type) {
		case Message:
			args[i] = sub.In(l)
		case Lines:
			args[i] = sub.In(l)
		}
	}
	return l.T(m.Key, args...)
}

// Lines are messages worded one a line, as one argument of another
// message (a list the sentence introduces).
type Lines []Message

// In words each line in l's language, joined by line breaks.
func (ls Lines) In(l *Localizer) string {
	out := make([]string, len(ls))
	for i, m := range ls {
		out[i] = m.In(l)
	}
	return strings.Join(out, "\n")
}

// English words m in English, the language of the JSON API and the logs.
func (m Message) English() string { return m.In(Default().Lang(Languages[0].Code)) }

// Text words m in the request's language.
func (m Message) Text(ctx context.Context) string { return m.In(From(ctx)) }

// Error is an error whose text is a catalogue message: Error() is the
// English text, and a page words it in the reader's language through
// ErrorText.
type Error struct{ Message }

func (e *Error) Error() string { return e.English() }

// Code is the message's key and arguments (Coded).
func (e *Error) Code() (key string, args []any) { return e.Key, e.Args }

// NewError returns an error saying the message key with its arguments
// given as name/value pairs.
func NewError(key string, args ...any) error { return &Error{M(key, args...)} }

// Coded is an error that carries its sentence as a catalogue key and its
// arguments (name/value pairs), and says the same sentence in English as
// Error(). *Error is one; so are the errors of the server–agent contract
// (jobs.Error), which cannot import this catalogue: it is a leaf below it
// (docs/packages.md#layers).
type Coded interface {
	error
	Code() (key string, args []any)
}

// MessageOf is the catalogue message err carries when err is itself a
// Coded error; a wrapped one is not taken, since the text around it would
// be lost.
func MessageOf(err error) (Message, bool) {
	c, ok := err.(Coded)
	if !ok {
		return Message{}, false
	}
	key, args := c.Code()
	return M(key, args...), true
}

// CodedIn is the first Coded error in err's chain (errors.As).
func CodedIn(err error) (Coded, bool) {
	var c Coded
	ok := errors.As(err, &c)
	return c, ok
}

// ErrorText words err in the request's language when it is a Coded
// error, else it is err's own text.
func ErrorText(ctx context.Context, err error) string {
	if m, ok := MessageOf(err); ok {
		return m.Text(ctx)
	}
	return err.Error()
}

// englishKeys are the keys of the English catalogue, for Has.
var englishKeys = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	for _, k := range Default().Keys(Languages[0].Code) {
		set[k] = true
	}
	return set
})

// Has reports whether key is a message of the catalogue: a text that may
// be either a key or a sentence of its own (a struct tag's message) is
// looked up only when it is one.
func Has(key string) bool { return englishKeys()[key] }
