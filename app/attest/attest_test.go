package attest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/attest"
	"github.com/ruckus/ruckus/app/store"
)

func f(v float64) *float64 { return &v }
func i(v int) *int         { return &v }

// The canonical form is fixed: these bytes are what other verifiers
// recompute (docs/operations.md#tamper-evident-results).
func TestCanonicalForm(t *testing.T) {
	t.Parallel()
	agent := int64(3)
	sent := time.Date(2026, 11, 26, 9, 30, 1, 123456789, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		name string
		row  store.AttestedResult
		want string
	}{
		{"nulls and empties", store.AttestedResult{Idx: 0, CustomID: "a", Status: "ok", SentAt: sent},
			`[0,0,"a","ok","","",0,0,false,"2026-11-26T08:30:01.123456Z",null,null,null,null,null,null,null,0,null,"","","","",null,null,null]`},
		{"every column", store.AttestedResult{Idx: 7, Sample: 2, CustomID: "q<7>", Status: "error", Output: "a \"quoted\"\nline & é",
			FinishReason: "stop", PromptTokens: 12, CompletionTokens: 34, TokensEstimated: true, SentAt: sent,
			TTFTMs: f(0.1), E2EMs: f(1e21), TPOTMs: f(-0), ITLMeanMs: f(math.NaN()), ITLP50Ms: f(math.Inf(1)), ITLP99Ms: f(math.Inf(-1)), ITLMaxMs: f(2.5),
			ContentEvents: 9, HTTPStatus: i(429), RequestID: "r1", ErrorClass: "http_429", Error: "slow down", Phase: "measured",
			AgentID: &agent, ITLGapsUs: []int32{1, -2}, ITLTokens: []int32{}},
			`[7,2,"q<7>","error","a \"quoted\"\nline & é","stop",12,34,true,"2026-11-26T08:30:01.123456Z",0.1,1e+21,0,"NaN","+Inf","-Inf",2.5,9,429,"r1","http_429","slow down","measured",3,[1,-2],[]]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(attest.Canonical(tc.row)); got != tc.want {
				t.Fatalf("canonical form\n got %s\nwant %s", got, tc.want)
			}
			d := attest.RowDigest(tc.row)
			if want := sha256.Sum256([]byte(tc.want)); d != want {
				t.Fatalf("row digest %x, want SHA-256 of the form %x", d, want)
			}
		})
	}
}

// rows is a run's rows in memory.
type rows []store.AttestedResult

func (rs rows) ForEachAttestedResult(_ context.Context, _ int64, fn func(store.AttestedResult) error) error {
	for _, r := range rs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func TestSignatureAndKeyAreChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := attest.NewSigner(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := attest.NewSigner([]byte("another seed of thirty-two bytes"))
	rs := rows{{Idx: 0, CustomID: "a", Status: "ok"}, {Idx: 1, CustomID: "b", Status: "ok"}}
	a, err := s.Sign(ctx, rs, 42, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := attest.RunDigest(42, 2, a.RowDigests); hex.EncodeToString(a.Digest) != hex.EncodeToString(want) {
		t.Fatal("the digest is not over the row digests")
	}
	if v, _ := s.Verify(ctx, rs, a); !v.Valid {
		t.Fatalf("intact: %+v", v)
	}
	if v, _ := other.Verify(ctx, rs, a); v.Valid || v.Problem != "the attestation was signed by another key than this server's" {
		t.Fatalf("another server's key: %+v", v)
	}
	// Rows and digest forged consistently, signature kept: caught.
	forged := a
	forged.RowDigests = append([]byte(nil), a.RowDigests...)
	forged.RowDigests[0] ^= 1
	forged.Digest = attest.RunDigest(42, 2, forged.RowDigests)
	if v, _ := s.Verify(ctx, rs, forged); v.Valid || v.Problem != "the signature does not match the attested digest" {
		t.Fatalf("re-digested without the key: %+v", v)
	}
	// A row added at the end.
	more := append(rows{}, rs...)
	more = append(more, store.AttestedResult{Idx: 2, Sample: 1, CustomID: "c", Status: "ok"})
	if v, _ := s.Verify(ctx, more, a); v.Valid || v.First == nil || v.First.Idx != 2 || v.First.Sample != 1 || v.First.Change != "added" {
		t.Fatalf("added: %+v", v)
	}
	// The last row gone.
	if v, _ := s.Verify(ctx, rs[:1], a); v.Valid || v.First == nil || v.First.Idx != 1 || v.First.Change != "removed" {
		t.Fatalf("removed: %+v", v)
	}
	if _, err := attest.NewSigner([]byte("short")); err == nil {
		t.Fatal("a 5-byte seed accepted")
	}
}
