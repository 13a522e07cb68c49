package handlers

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/attest"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/results"
)

// Attestations verifies runs' signed digests (attest.Service).
type Attestations interface {
	VerifyRun(ctx context.Context, runID int64) (store.Attestation, attest.Verification, error)
}

// apiAttestation is GET /api/v1/runs/{id}/attestation.
type apiAttestation struct {
	RunID     int64              `json:"run_id"`
	Algorithm string             `json:"algorithm"`
	Rows      int                `json:"rows"`
	Digest    string             `json:"digest"`
	Signature string             `json:"signature"`
	PublicKey string             `json:"public_key"`
	SignedAt  time.Time          `json:"signed_at"`
	Valid     bool               `json:"valid"`
	Current   string             `json:"current_digest"`
	Problem   string             `json:"problem,omitempty"`
	First     *attest.Difference `json:"first_difference,omitempty"`
}

// verifyRun checks the run's attestation (attest.ErrNotAttested: none yet).
func (s *server) verifyRun(c *fiber.Ctx, runID int64) (store.Attestation, attest.Verification, error) {
	if s.Attestations == nil {
		return store.Attestation{}, attest.Verification{}, catalogueErr(fiber.StatusServiceUnavailable, "attest_page.not_set_up")
	}
	return s.Attestations.VerifyRun(c.UserContext(), runID)
}

func (s *server) apiRunAttestation(c *fiber.Ctx) error {
	_, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	a, v, err := s.verifyRun(c, run.ID)
	if errors.Is(err, attest.ErrNotAttested) {
		return fiber.NewError(fiber.StatusNotFound, "The run has no attestation yet: its results are signed when it ends.")
	}
	if err != nil {
		return err
	}
	return c.JSON(apiAttestation{RunID: a.RunID, Algorithm: "ed25519", Rows: a.RowCount, Digest: digestText(a.Digest),
		Signature: base64.StdEncoding.EncodeToString(a.Signature), PublicKey: base64.StdEncoding.EncodeToString(a.PublicKey),
		SignedAt: a.SignedAt.UTC(), Valid: v.Valid, Current: digestText(v.Digest), Problem: v.Problem, First: v.First})
}

// showAttestation verifies a run for its page: the section as a fragment
// for HTMX, else on a page of its own.
func (s *server) showAttestation(c *fiber.Ctx) error {
	_, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	view := results.Attestation{RunID: run.ID, Checked: true}
	a, v, err := s.verifyRun(c, run.ID)
	switch {
	case errors.Is(err, attest.ErrNotAttested):
	case err != nil:
		return err
	default:
		view.Signed, view.Rows, view.Digest, view.Valid, view.Problem = true, a.RowCount, digestText(a.Digest), v.Valid, attestProblem(c, v)
		view.SignedAt, view.PublicKey = a.SignedAt.UTC().Format(time.RFC3339), base64.StdEncoding.EncodeToString(a.PublicKey)
	}
	if c.Get("HX-Request") != "" {
		return render(c, fiber.StatusOK, results.AttestationSection(view))
	}
	return render(c, fiber.StatusOK, results.AttestationPage(view))
}

// attestProblems are the catalogue's words for the problems a
// verification names (attest.Signer.Verify); the API gives them as found.
var attestProblems = map[string]string{
	"the attestation was signed by another key than this server's": "attest_page.other_key",
	"the attestation's row list is malformed":                      "attest_page.malformed",
	"the attestation's digest does not match its row digests":      "attest_page.digest_mismatch",
	"the signature does not match the attested digest":             "attest_page.bad_signature",
	"the results' digest differs from the signed one":              "attest_page.results_differ",
}

// rowChanges are the catalogue's sentences for a row that differs
// (attest.Difference's Change).
var rowChanges = map[string]string{
	"changed": "attest_page.row_changed",
	"added":   "attest_page.row_added",
	"removed": "attest_page.row_removed",
}

// attestProblem is what a verification found wrong, in the reader's
// language; a problem the catalogue does not know shows as found.
func attestProblem(c *fiber.Ctx, v attest.Verification) string {
	ctx := c.UserContext()
	if k, ok := attestProblems[v.Problem]; ok {
		return i18n.T(ctx, k)
	}
	if d := v.First; d != nil && v.Problem == d.String() {
		if k, ok := rowChanges[d.Change]; ok {
			id := ""
			if d.CustomID != "" {
				id = i18n.T(ctx, "attest_page.custom_id", "ID", strconv.Quote(d.CustomID))
			}
			return i18n.T(ctx, k, "Idx", d.Idx, "Sample", d.Sample, "CustomID", id)
		}
	}
	return v.Problem
}

// digestText is how a digest is written everywhere: sha256:<hex>.
func digestText(d []byte) string {
	if len(d) == 0 {
		return ""
	}
	return "sha256:" + hex.EncodeToString(d)
}
