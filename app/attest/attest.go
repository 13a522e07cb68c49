// Package attest makes finished runs' results tamper-evident: the server
// digests a run's measured result rows in a canonical form and signs the
// digest with its ed25519 key; a verification recomputes the digest from
// the rows as they are now and names the first row that differs.
//
// The canonical form (docs/operations.md#tamper-evident-results), so that anyone
// can recompute it from an export:
//
//   - a row is the JSON array of its measured columns in this order: idx,
//     sample, custom_id, status, output, finish_reason, prompt_tokens,
//     completion_tokens, tokens_estimated, sent_at, ttft_ms, e2e_ms,
//     tpot_ms, itl_mean_ms, itl_p50_ms, itl_p99_ms, itl_max_ms,
//     content_events, http_status, request_id, error_class, error, phase,
//     agent_id, itl_gaps_us, itl_tokens; no spaces; SQL NULL as null;
//     numbers in their shortest exact decimal form (NaN and infinities as
//     the strings "NaN", "+Inf", "-Inf"); sent_at as UTC RFC 3339 with six
//     fractional digits; strings as JSON strings without HTML escaping;
//   - a row's digest is SHA-256 of that array;
//   - the run's digest is SHA-256 of "ruckus-results-v1\n<run id>\n<rows>\n"
//     followed by every row's digest (32 bytes each) in (idx, sample) order;
//   - the signature is ed25519 over "ruckus-attestation-v1\n<run id>\n<rows>\n<digest, lower-case hex>\n".
//
// Scores and sandbox findings are not measured: they are derived from the
// rows on the server and can be recomputed (rescoring), so they are not
// in the digest.
package attest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ruckus/ruckus/app/store"
)

// Rows is what attesting and verifying read: a run's measured result rows
// in (idx, sample) order.
type Rows interface {
	ForEachAttestedResult(ctx context.Context, runID int64, fn func(store.AttestedResult) error) error
}

// ErrNotAttested: the run has no attestation yet (it is made when the run
// ends).
var ErrNotAttested = errors.New("the run has no attestation yet: one is made when the run ends")

// Canonical is a row's canonical form.
func Canonical(r store.AttestedResult) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	fields := []any{r.Idx, r.Sample, r.CustomID, r.Status, r.Output, r.FinishReason, r.PromptTokens, r.CompletionTokens,
		r.TokensEstimated, r.SentAt, r.TTFTMs, r.E2EMs, r.TPOTMs, r.ITLMeanMs, r.ITLP50Ms, r.ITLP99Ms, r.ITLMaxMs,
		r.ContentEvents, r.HTTPStatus, r.RequestID, r.ErrorClass, r.Error, r.Phase, r.AgentID, r.ITLGapsUs, r.ITLTokens}
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeValue(&b, f)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case int:
		b.WriteString(strconv.Itoa(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		writeString(b, v)
	case time.Time:
		writeString(b, v.UTC().Format("2006-01-02T15:04:05.000000Z"))
	case *float64:
		if v == nil {
			b.WriteString("null")
			return
		}
		writeFloat(b, *v)
	case *int:
		if v == nil {
			b.WriteString("null")
			return
		}
		b.WriteString(strconv.Itoa(*v))
	case *int64:
		if v == nil {
			b.WriteString("null")
			return
		}
		b.WriteString(strconv.FormatInt(*v, 10))
	case []int32:
		if v == nil {
			b.WriteString("null")
			return
		}
		b.WriteByte('[')
		for i, n := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(int64(n), 10))
		}
		b.WriteByte(']')
	default:
		panic(fmt.Sprintf("attest: no canonical form for %T", v))
	}
}

func writeFloat(b *bytes.Buffer, f float64) {
	switch {
	case math.IsNaN(f):
		b.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		b.WriteString(`"+Inf"`)
	case math.IsInf(f, -1):
		b.WriteString(`"-Inf"`)
	default:
		b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}

// RowDigest is SHA-256 of the row's canonical form.
func RowDigest(r store.AttestedResult) [32]byte { return sha256.Sum256(Canonical(r)) }

// rowKey packs a row's (idx, sample), big-endian, for row_keys.
func rowKey(idx, sample int) [6]byte {
	var k [6]byte
	binary.BigEndian.PutUint32(k[:4], uint32(int32(idx)))
	binary.BigEndian.PutUint16(k[4:], uint16(int16(sample)))
	return k
}

func unpackKey(k []byte) (idx, sample int) {
	return int(int32(binary.BigEndian.Uint32(k[:4]))), int(int16(binary.BigEndian.Uint16(k[4:6])))
}

// RunDigest is the run's digest over its rows' digests (concatenated).
func RunDigest(runID int64, rows int, rowDigests []byte) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "ruckus-results-v1\n%d\n%d\n", runID, rows)
	h.Write(rowDigests)
	return h.Sum(nil)
}

// Message is what the signature covers.
func Message(runID int64, rows int, digest []byte) []byte {
	return fmt.Appendf(nil, "ruckus-attestation-v1\n%d\n%d\n%s\n", runID, rows, hex.EncodeToString(digest))
}

// Signer signs and verifies with the server's key.
type Signer struct {
	key ed25519.PrivateKey
}

// NewSigner makes a signer from the key's 32-byte seed.
func NewSigner(seed []byte) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("the attestation key must be %d bytes, not %d", ed25519.SeedSize, len(seed))
	}
	return &Signer{key: ed25519.NewKeyFromSeed(seed)}, nil
}

// PublicKey is the key a signature is checked with.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// Digest reads the run's rows and returns its digest with what a later
// verification compares row by row.
func Digest(ctx context.Context, rows Rows, runID int64) (n int, keys, digests, digest []byte, err error) {
	err = rows.ForEachAttestedResult(ctx, runID, func(r store.AttestedResult) error {
		k, d := rowKey(r.Idx, r.Sample), RowDigest(r)
		keys, digests = append(keys, k[:]...), append(digests, d[:]...)
		n++
		return nil
	})
	if err != nil {
		return 0, nil, nil, nil, err
	}
	return n, keys, digests, RunDigest(runID, n, digests), nil
}

// Sign attests the run's rows as they are now, under fence.
func (s *Signer) Sign(ctx context.Context, rows Rows, runID, fence int64) (store.Attestation, error) {
	n, keys, digests, digest, err := Digest(ctx, rows, runID)
	if err != nil {
		return store.Attestation{}, err
	}
	return store.Attestation{RunID: runID, Fence: fence, RowCount: n, RowKeys: keys, RowDigests: digests, Digest: digest,
		Signature: ed25519.Sign(s.key, Message(runID, n, digest)), PublicKey: s.PublicKey()}, nil
}

// Difference is the first row that differs from what was signed.
type Difference struct {
	Idx      int    `json:"idx"`
	Sample   int    `json:"sample"`
	CustomID string `json:"custom_id,omitempty"`
	// Change is "changed" (the row's columns differ), "added" (a row not
	// signed) or "removed" (a signed row is gone).
	Change string `json:"change"`
}

func (d Difference) String() string {
	what := map[string]string{"changed": "differs from the signed one", "added": "was not signed (added since)", "removed": "was signed and is gone"}[d.Change]
	id := ""
	if d.CustomID != "" {
		id = fmt.Sprintf(" (custom_id %q)", d.CustomID)
	}
	return fmt.Sprintf("result row idx %d sample %d%s %s", d.Idx, d.Sample, id, what)
}

// Verification is what checking a run's attestation found.
type Verification struct {
	Valid bool
	// Problem says why it is not valid.
	Problem string
	// First is the first row that differs, when rows do.
	First *Difference
	// Digest is the digest of the rows as they are now.
	Digest []byte
	Rows   int
}

// Verify checks a's signature with this signer's key and recomputes the
// digest from the rows as they are now.
func (s *Signer) Verify(ctx context.Context, rows Rows, a store.Attestation) (Verification, error) {
	v := Verification{}
	switch {
	case !bytes.Equal(a.PublicKey, s.PublicKey()):
		v.Problem = "the attestation was signed by another key than this server's"
	case len(a.RowKeys) != 6*a.RowCount || len(a.RowDigests) != 32*a.RowCount:
		v.Problem = "the attestation's row list is malformed"
	case !bytes.Equal(RunDigest(a.RunID, a.RowCount, a.RowDigests), a.Digest):
		v.Problem = "the attestation's digest does not match its row digests"
	case !ed25519.Verify(s.PublicKey(), Message(a.RunID, a.RowCount, a.Digest), a.Signature):
		v.Problem = "the signature does not match the attested digest"
	}
	i := 0 // the next signed row
	err := rows.ForEachAttestedResult(ctx, a.RunID, func(r store.AttestedResult) error {
		d := RowDigest(r)
		v.Digest = append(v.Digest, d[:]...) // the row digests; hashed below
		v.Rows++
		if v.First != nil || len(a.RowKeys) != 6*a.RowCount || len(a.RowDigests) != 32*a.RowCount {
			return nil
		}
		if i >= a.RowCount {
			v.First = &Difference{Idx: r.Idx, Sample: r.Sample, CustomID: r.CustomID, Change: "added"}
			return nil
		}
		k := rowKey(r.Idx, r.Sample)
		signed := a.RowKeys[6*i : 6*i+6]
		switch c := bytes.Compare(k[:], signed); {
		case c == 0 && !bytes.Equal(d[:], a.RowDigests[32*i:32*i+32]):
			v.First = &Difference{Idx: r.Idx, Sample: r.Sample, CustomID: r.CustomID, Change: "changed"}
		case c == 0:
			i++
		case keyLess(r.Idx, r.Sample, signed):
			v.First = &Difference{Idx: r.Idx, Sample: r.Sample, CustomID: r.CustomID, Change: "added"}
		default:
			idx, sample := unpackKey(signed)
			v.First = &Difference{Idx: idx, Sample: sample, Change: "removed"}
		}
		return nil
	})
	if err != nil {
		return Verification{}, err
	}
	if v.First == nil && i < a.RowCount && len(a.RowKeys) == 6*a.RowCount {
		idx, sample := unpackKey(a.RowKeys[6*i:])
		v.First = &Difference{Idx: idx, Sample: sample, Change: "removed"}
	}
	v.Digest = RunDigest(a.RunID, v.Rows, v.Digest)
	if v.Problem == "" && v.First != nil {
		v.Problem = v.First.String()
	}
	if v.Problem == "" && !bytes.Equal(v.Digest, a.Digest) {
		v.Problem = "the results' digest differs from the signed one"
	}
	v.Valid = v.Problem == ""
	return v, nil
}

// keyLess orders rows as the database does: by idx, then sample (signed
// integers, which the packed bytes do not order for negatives).
func keyLess(idx, sample int, signed []byte) bool {
	si, ss := unpackKey(signed)
	return idx < si || idx == si && sample < ss
}
