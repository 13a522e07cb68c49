// Package dataset reads an uploaded JSONL dataset as a stream and turns every
// line into one normalised item, so the rest of the system deals with a
// single request shape (the OpenAI batch request) whatever the upload looked
// like.
//
// Uploads can be large (hundreds of megabytes) and arrive over the network,
// so the parser never holds the file: it reads one line at a time through a
// buffer bounded by Limits.MaxLineBytes, hands each valid item to the caller
// and forgets it. The only state that grows with the file is a compact set
// of hashes of the custom_ids seen, needed to reject duplicates.
//
// A file is stored whole or not at all, so the parser does not stop at the
// first bad line: it records every problem (keeping the first 50 for people
// to read) and keeps going, so one upload reports everything that is wrong.
package dataset

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ruckus/ruckus/app/i18n"
	"hash"
	"hash/maphash"
	"io"
	"math"
)

// Limits bound what one upload may cost the server. A zero or negative field
// means "use the default", so a zero Limits is safe to pass.
type Limits struct {
	MaxFileBytes int64 // uncompressed bytes; default 1 GiB
	MaxLineBytes int   // default 1 MiB
	MaxItems     int   // default 2,000,000
}

// DefaultLimits returns limits generous enough for public benchmark sets yet
// small enough that a hostile upload cannot exhaust memory or disk.
func DefaultLimits() Limits {
	return Limits{MaxFileBytes: 1 << 30, MaxLineBytes: 1 << 20, MaxItems: 2_000_000}
}

// withDefaults fills unset fields so callers may configure only some.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = d.MaxLineBytes
	}
	if l.MaxItems <= 0 {
		l.MaxItems = d.MaxItems
	}
	return l
}

// Format names the shape of an uploaded file. It is stored with the dataset
// so people can see how their file was understood.
type Format string

// The accepted formats. A file has one format, fixed by its first line whose
// shape is recognised; every other line must have the same shape.
const (
	// FormatOpenAIBatch is OpenAI's batch input: custom_id, method, url, body.
	FormatOpenAIBatch Format = "openai-batch"
	// FormatSimple is the hand-written shape: prompt or messages, optional
	// id and reference/answer or choices+label.
	FormatSimple Format = "simple"
	// FormatGSM8K is the GSM8K release: question and answer ("… #### 42").
	FormatGSM8K Format = "gsm8k"
	// FormatHumanEval is the HumanEval release: task_id, prompt, test,
	// entry_point and canonical_solution.
	FormatHumanEval Format = "humaneval"
	// FormatMMLU is MMLU (cais/mmlu): question, 4 choices, the answer's
	// index from 0, subject.
	FormatMMLU Format = "mmlu"
	// FormatARC is the AI2 Reasoning Challenge: question.stem and
	// question.choices[{label,text}] (AI2's JSONL) or question and
	// choices{text[],label[]} (Hugging Face's), and answerKey.
	FormatARC Format = "arc"
	// FormatHellaSwag is HellaSwag: ctx (or ctx_a and ctx_b), 4 endings,
	// label, activity_label.
	FormatHellaSwag Format = "hellaswag"
	// FormatTruthfulQA is TruthfulQA's multiple-choice configuration:
	// question and mc1_targets{choices[],labels[]}, scored as MC1.
	FormatTruthfulQA Format = "truthfulqa-mc1"
	// FormatMBPP is MBPP: text, code, test_list and optionally
	// test_setup_code, challenge_test_list, task_id.
	FormatMBPP Format = "mbpp"
	// FormatWinoGrande is WinoGrande (allenai/winogrande): sentence with
	// a blank "_", option1, option2, answer "1" or "2".
	FormatWinoGrande Format = "winogrande"
	// FormatOpenBookQA is OpenBookQA (allenai/openbookqa): question_stem,
	// choices{text[],label[]}, answerKey.
	FormatOpenBookQA Format = "openbookqa"
	// FormatTriviaQA is TriviaQA (mandarjoshi/trivia_qa): question,
	// question_id, answer{value, aliases, normalized_aliases, …}.
	FormatTriviaQA Format = "triviaqa"
	// FormatNQOpen is Natural Questions open
	// (google-research-datasets/nq_open): question, answer[].
	FormatNQOpen Format = "nq-open"
	// FormatCodeXGLUE is CodeXGLUE code-to-text: code_tokens,
	// docstring_tokens and optionally language, the rest of CodeSearchNet's
	// fields ignored.
	FormatCodeXGLUE Format = "codexglue-code-to-text"
)

// Item is one normalised dataset line.
type Item struct {
	Index     int             // 0-based position among valid items
	Line      int             // 1-based line number in the (decompressed) file
	CustomID  string          // unique within the file
	Request   json.RawMessage // always the OpenAI batch request shape: {"method":"POST","url":"/v1/chat/completions"|"/v1/completions","body":{...}}
	Reference json.RawMessage // nil when the line has none
	// Category groups items for per-category scores: MMLU's subject,
	// HellaSwag's activity_label, a "category" where a suite has one;
	// "" for none.
	Category string
	// Shot is the item's own prompt in pieces (a Shot as JSON) for the
	// standard suites, whatever the upload's shots; nil for the others.
	Shot json.RawMessage
}

// LineError names the line and field that are wrong, so the person who
// uploaded the file can fix it without guessing. Line 0 = the file as a
// whole; Field "" = the line as a whole.
//
// Message is the English text, which the JSON API answers; Key and Args are
// the catalogue message (app/i18n) it was worded from, for a page to word
// it in the reader's language (Text).
type LineError struct {
	Line    int    `json:"line"`
	Field   string `json:"field"`
	Message string `json:"message"`
	Key     string `json:"-"`
	Args    []any  `json:"-"`
}

// NewLineError returns the error at field (line 0: the line is set where
// it is recorded) saying the catalogue message key, its arguments given as
// name/value pairs.
func NewLineError(field, key string, args ...any) *LineError {
	m := i18n.M(key, args...)
	return &LineError{Field: field, Message: m.English(), Key: key, Args: args}
}

// lineErr is NewLineError without the English text, which is worded only
// for the errors a parse keeps (Parser.lineError): most of a bad file's
// errors are only counted.
func lineErr(field, key string, args ...any) *LineError {
	return &LineError{Field: field, Key: key, Args: args}
}

// wording is the catalogue message e says; a text without a key says itself.
func (e *LineError) wording() i18n.Message {
	if e.Key == "" {
		return i18n.M("valid.as_is", "Text", e.Message)
	}
	return i18n.Message{Key: e.Key, Args: e.Args}
}

// Text is e's message in the request's language (ctx carries it, see
// i18n.With); the English Message when it has no catalogue key.
func (e LineError) Text(ctx context.Context) string {
	if e.Key == "" {
		return e.Message
	}
	return e.wording().Text(ctx)
}

// Error makes a LineError usable as an error (a setting refused while a
// file is read).
func (e *LineError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

const (
	maxKeptErrors    = 50       // errors kept for people to read; more are only counted
	maxCustomIDRunes = 256      // as OpenAI's batch API allows
	readBufSize      = 64 << 10 // lines shorter than this are parsed in place, without a copy
)

// errTooLarge ends reading when the decompressed input passes MaxFileBytes.
var errTooLarge = errors.New("the decompressed input is larger than the limit")

// Parser reads one upload. Use NewParser, call Next until it returns false,
// then look at Err, Errors and the totals. A Parser is not safe for
// concurrent use.
type Parser struct {
	lim Limits
	raw *rawCounter
	br  *bufio.Reader

	started, done, eof, gzipped bool
	err                         error

	line      int    // lines read so far
	long      []byte // accumulates lines longer than the read buffer
	format    Format
	formatAt  int // line where the format was recognised
	count     int
	seed      maphash.Seed
	seen      map[uint64]int32 // hash of custom_id → line; collisions (~2⁻⁶⁴ per pair) would be reported as duplicates
	errs      []LineError      // line errors, at most maxKeptErrors
	fileErrs  []LineError      // Line 0 errors; always kept
	nErrs     int
	nAnswer   int // items whose reference carries an answer
	nChoices  int // items whose reference carries choices and a label
	nComplete int // items sent to /v1/completions

	encBuf bytes.Buffer
	enc    *json.Encoder

	shots     int          // solved examples before each suite item (Options.Shots)
	exemplars *ExemplarSet // the fixed examples before each item (Options.Exemplars)
	lastShot  *shot        // the suite pieces of the item parseLine just returned
	kshot     kshotState   // items held until their category's examples are known
}

// Options are how a file's items are turned into prompts.
type Options struct {
	// Shots is how many solved examples of the same suite and category
	// precede each item's question (k-shot), 0..MaxShots. The files whose
	// items keep their prompt pieces take it: the standard suites, GSM8K
	// and simple lines with a prompt and a reference.
	Shots int
	// Exemplars names a fixed set of solved examples (ExemplarSets, such as
	// "gsm8k-cot") written before each item's question instead; for the
	// files whose items keep their bare question (GSM8K, plain prompts).
	// Callers check the name (Exemplars) and leave Shots 0 beside it.
	Exemplars string
}

// MaxShots bounds Options.Shots.
const MaxShots = 25

// NewParser returns a parser over r, the upload exactly as received (gzip or
// not). It reads nothing until the first call to Next. Unset fields of lim
// take their defaults.
func NewParser(r io.Reader, lim Limits) *Parser {
	return NewParserWith(r, lim, Options{})
}

// NewParserWith is NewParser with prompt options; Shots outside
// 0..MaxShots is clamped (callers validate it for the person first).
func NewParserWith(r io.Reader, lim Limits, opt Options) *Parser {
	p := &Parser{
		shots: min(max(opt.Shots, 0), MaxShots),
		lim:   lim.withDefaults(),
		raw:   &rawCounter{r: r, h: sha256.New()},
		seed:  maphash.MakeSeed(),
		seen:  make(map[uint64]int32),
	}
	p.enc = json.NewEncoder(&p.encBuf)
	p.enc.SetEscapeHTML(false) // keep "<" as "<" in stored text
	if set, ok := Exemplars(opt.Exemplars); ok && p.shots == 0 {
		p.exemplars = &set
	}
	return p
}

// Next returns the next valid item. Invalid lines are recorded (see Errors)
// and skipped, so a caller that only wants to know whether the file is good
// can simply drain Next and then check ErrorCount. It returns false at the
// end of the input or when a fatal problem (read error, a limit passed)
// stops the parse; after that it keeps returning false.
func (p *Parser) Next() (Item, bool) {
	if it, ok := p.kshot.pop(); ok {
		return it, true
	}
	if p.done {
		return Item{}, false
	}
	if !p.started && !p.start() {
		p.done = true
		return Item{}, false
	}
	for {
		line, tooLong, err := p.readLine()
		if err != nil {
			if err == io.EOF {
				p.endShots()
			}
			p.stop(err)
			if it, ok := p.kshot.pop(); ok {
				return it, true
			}
			return Item{}, false
		}
		p.line++
		if tooLong {
			p.lineError(p.line, "", i18n.M("dataset_err.line_longer_than_limit", "A", p.lim.MaxLineBytes))
			continue
		}
		it, ok := p.parseLine(line)
		if p.done {
			return Item{}, false
		}
		if ok && p.shots > 0 {
			p.holdForShots(it)
			if it, ok := p.kshot.pop(); ok {
				return it, true
			}
			if p.done {
				return Item{}, false
			}
			continue
		}
		if ok && p.exemplars != nil {
			return p.withExemplars(it)
		}
		if ok {
			return it, true
		}
	}
}

// Errors returns the first 50 errors in line order (file-wide errors, Line 0,
// first). It returns nil when there are none.
func (p *Parser) Errors() []LineError {
	if len(p.fileErrs)+len(p.errs) == 0 {
		return nil
	}
	out := make([]LineError, 0, min(len(p.fileErrs)+len(p.errs), maxKeptErrors))
	out = append(out, p.fileErrs...)
	for _, e := range p.errs {
		if len(out) == maxKeptErrors {
			break
		}
		out = append(out, e)
	}
	return out
}

// ErrorCount counts every error, including those past the 50 that Errors
// keeps, so a page can say "and 1,234 more".
func (p *Parser) ErrorCount() int { return p.nErrs }

// Err reports why reading stopped early for reasons that are not the file's
// content: the upload's reader failed. Problems with the content, including
// passing a limit and gzip data that is truncated or corrupt, are in Errors
// instead.
func (p *Parser) Err() error { return p.err }

// Format returns the detected format, "" until a line's shape has been
// recognised.
func (p *Parser) Format() Format { return p.format }

// Count returns the number of valid items so far.
func (p *Parser) Count() int { return p.count }

// Bytes returns how many bytes of the upload, as uploaded (compressed if
// gzip), have been read so far; once Next returned false after a complete
// parse it is the upload's size.
func (p *Parser) Bytes() int64 { return p.raw.n }

// SHA256 returns the hex SHA-256 of the upload as uploaded, used to spot
// identical uploads. It covers the whole upload only once Next has returned
// false without a fatal problem; a parse stopped by a limit or a read error
// has not read (and will not read) the rest.
func (p *Parser) SHA256() string { return hex.EncodeToString(p.raw.h.Sum(nil)) }

// SuggestedScorer proposes a default scorer from the file's shape so people
// rarely have to pick one: "numeric" for GSM8K; "choice" when every item has
// choices and a label; "exact" when every item has a reference answer;
// "choice" for the multiple-choice suites (MMLU, ARC, HellaSwag,
// TruthfulQA, WinoGrande, OpenBookQA); "humaneval" and "mbpp" (their
// tests executed in the sandbox) for HumanEval and MBPP; "triviaqa-em"
// for TriviaQA and Natural Questions open; "codexglue-bleu" for
// CodeXGLUE code-to-text; otherwise "".
func (p *Parser) SuggestedScorer() string {
	switch p.format {
	case FormatGSM8K:
		return "numeric"
	case FormatHumanEval:
		return "humaneval"
	case FormatMMLU, FormatARC, FormatHellaSwag, FormatTruthfulQA:
		return "choice"
	case FormatMBPP:
		return "mbpp"
	case FormatWinoGrande, FormatOpenBookQA:
		return "choice"
	case FormatTriviaQA, FormatNQOpen:
		return "triviaqa-em"
	case FormatCodeXGLUE:
		return "codexglue-bleu"
	case FormatSimple, FormatOpenAIBatch:
		switch {
		case p.count == 0:
			return ""
		case p.nChoices == p.count:
			return "choice"
		case p.nAnswer == p.count:
			return "exact"
		}
	}
	return ""
}

// TaskKind gives a one-word description of the task, for listing and
// filtering datasets: "math" (GSM8K), "code" (HumanEval), "multiple-choice"
// (every item has choices), "qa" (every simple item has a reference answer;
// TriviaQA, NQ open), "summarization" (CodeXGLUE code-to-text),
// "completion" (every OpenAI batch item goes to /v1/completions), otherwise
// "chat"; "" before any line was recognised.
func (p *Parser) TaskKind() string {
	switch p.format {
	case FormatGSM8K:
		return "math"
	case FormatHumanEval, FormatMBPP:
		return "code"
	case FormatMMLU, FormatARC, FormatHellaSwag, FormatTruthfulQA, FormatWinoGrande, FormatOpenBookQA:
		return "multiple-choice"
	case FormatTriviaQA, FormatNQOpen:
		return "qa"
	case FormatCodeXGLUE:
		return "summarization"
	case FormatSimple:
		switch {
		case p.count > 0 && p.nChoices == p.count:
			return "multiple-choice"
		case p.count > 0 && p.nAnswer == p.count:
			return "qa"
		}
		return "chat"
	case FormatOpenAIBatch:
		if p.count > 0 && p.nComplete == p.count {
			return "completion"
		}
		return "chat"
	}
	return ""
}

// start sniffs the gzip magic bytes and builds the reader chain:
// upload → hash/count → (gunzip) → size limit → line buffer.
func (p *Parser) start() bool {
	p.started = true
	var head [2]byte
	n, err := io.ReadFull(p.raw, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		p.err = fmt.Errorf("read the upload: %w", err)
		return false
	}
	src := io.MultiReader(bytes.NewReader(head[:n]), p.raw)
	if n == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(bufio.NewReaderSize(src, readBufSize))
		if err != nil {
			if p.raw.err != nil {
				p.err = fmt.Errorf("read the gzip header of the upload: %w", err)
			} else {
				p.fileError(i18n.M("dataset_err.file_starts_as_gzip", "A", gzipProblem(err)))
			}
			return false
		}
		p.gzipped = true
		src = zr
	}
	p.br = bufio.NewReaderSize(&limitReader{r: src, max: p.lim.MaxFileBytes}, readBufSize)
	return true
}

// stop ends the parse for the reason readLine gave.
func (p *Parser) stop(err error) {
	p.done = true
	switch {
	case err == io.EOF:
		if p.count == 0 && p.nErrs == 0 {
			p.fileError(i18n.M("dataset_err.file_has_no_items"))
		}
	case errors.Is(err, errTooLarge):
		p.fileError(i18n.M("dataset_err.file_larger_than_limit", "A", p.lim.MaxFileBytes))
	case p.gzipped && p.raw.err == nil:
		// The upload arrived whole; the gzip data in it is broken.
		where := i18n.M("dataset_err.at_line", "Line", p.line+1) // the line being read
		if errors.Is(err, gzip.ErrChecksum) {
			where = i18n.M("dataset_err.after_line", "Line", p.line) // checked once the data ends
		}
		p.fileError(i18n.M("dataset_err.gzip_where", "Problem", gzipProblem(err), "Where", where))
	case p.gzipped:
		p.err = fmt.Errorf("decompress the upload (gzip) after line %d: %w", p.line, err)
	default:
		p.err = fmt.Errorf("read the upload after line %d: %w", p.line, err)
	}
}

// readLine returns the next line without its line end (and without a
// leading BOM on the first line). A line longer than the limit is skipped up
// to its newline without being buffered, and reported as tooLong. err is
// io.EOF at the end, or what stopped the input; a partial line before a
// non-EOF error is dropped.
func (p *Parser) readLine() (line []byte, tooLong bool, err error) {
	if p.eof {
		return nil, false, io.EOF
	}
	// Room for "\r\n" and, on the first line, a BOM; trimLine checks exactly.
	budget := p.lim.MaxLineBytes + 5
	p.long = p.long[:0]
	got := false
	for {
		frag, err := p.br.ReadSlice('\n')
		if len(frag) > 0 {
			got = true
		}
		switch {
		case err == nil && !tooLong && len(p.long) == 0:
			return p.trimLine(frag)
		case tooLong:
			// discard up to the newline
		case len(p.long)+len(frag) > budget:
			tooLong = true
			p.long = p.long[:0]
		default:
			p.long = append(p.long, frag...)
		}
		if err == nil {
			break
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != io.EOF {
			return nil, false, err
		}
		p.eof = true
		if !got {
			return nil, false, io.EOF
		}
		break
	}
	if tooLong {
		return nil, true, nil
	}
	return p.trimLine(p.long)
}

// trimLine drops the line end and the first line's BOM, then applies the
// exact line limit.
func (p *Parser) trimLine(b []byte) ([]byte, bool, error) {
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if p.line == 0 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	if len(b) > p.lim.MaxLineBytes {
		return nil, true, nil
	}
	return b, false, nil
}

// lineError records a problem with one line.
func (p *Parser) lineError(line int, field string, m i18n.Message) {
	p.nErrs++
	if len(p.errs) < maxKeptErrors {
		p.errs = append(p.errs, LineError{Line: line, Field: field, Message: m.English(), Key: m.Key, Args: m.Args})
	}
}

// fileError records a problem with the file as a whole. These are few (at
// most two) and always kept, because they explain why the parse stopped.
func (p *Parser) fileError(m i18n.Message) {
	p.nErrs++
	p.fileErrs = append(p.fileErrs, LineError{Line: 0, Message: m.English(), Key: m.Key, Args: m.Args})
}

// checkID registers a custom_id, reporting the earlier line if it was seen.
func (p *Parser) checkID(id string) (earlier int, dup bool) {
	h := maphash.String(p.seed, id)
	if l, ok := p.seen[h]; ok {
		return int(l), true
	}
	p.seen[h] = int32(min(p.line, math.MaxInt32))
	return 0, false
}

// gzipProblem says what is wrong with gzip data, in words that point at the
// file rather than the server.
func gzipProblem(err error) i18n.Message {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return i18n.M("dataset_err.gzip_truncated")
	case errors.Is(err, gzip.ErrChecksum):
		return i18n.M("dataset_err.gzip_checksum")
	case errors.Is(err, gzip.ErrHeader):
		return i18n.M("dataset_err.gzip_header")
	case errors.As(err, &corrupt):
		return i18n.M("dataset_err.gzip_corrupt", "Byte", int64(corrupt))
	}
	return i18n.M("dataset_err.gzip_other", "Detail", err.Error())
}

// rawCounter counts and hashes the bytes exactly as uploaded, and keeps
// the upload's own read error, so a failed read is told apart from broken
// gzip data.
type rawCounter struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	err error
}

// Read passes the upload through, counting and hashing what it returns.
func (c *rawCounter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		c.h.Write(b[:n])
		c.n += int64(n)
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// limitReader fails with errTooLarge once more than max bytes have passed.
// It asks for at most one byte beyond the limit, so a file of exactly max
// bytes is accepted.
type limitReader struct {
	r      io.Reader
	n, max int64
}

// Read passes data through until the limit is passed.
func (l *limitReader) Read(b []byte) (int, error) {
	if l.n > l.max {
		return 0, errTooLarge
	}
	if rem := l.max - l.n + 1; int64(len(b)) > rem {
		b = b[:rem]
	}
	n, err := l.r.Read(b)
	l.n += int64(n)
	if l.n > l.max {
		return n, errTooLarge
	}
	return n, err
}
