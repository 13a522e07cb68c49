package jobs

// Error is an error of the contract as a code: Key names a sentence of
// the server's catalogue (app/i18n) and Args are its arguments as
// name/value pairs. The contract words nothing itself, so that it stays a
// leaf both programs share (docs/packages.md#layers); the server words
// the code in the reader's language (i18n.ErrorText, valid.FromError)
// and agentd logs Error(), the same sentence in English.
type Error struct {
	Key  string
	Args []any
	// english is the catalogue's English sentence for Key, written out
	// here for logs and agentd; a test holds the two together.
	english string
}

// Error is the English sentence.
func (e *Error) Error() string { return e.english }

// Code is the catalogue key and its arguments, for the caller to word.
func (e *Error) Code() (key string, args []any) { return e.Key, e.Args }

// codeError is the error saying english, worded elsewhere as key with
// args given as name/value pairs.
func codeError(english, key string, args ...any) *Error {
	return &Error{Key: key, Args: args, english: english}
}
