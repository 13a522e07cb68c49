package attest

import (
	"context"
	"errors"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
)

// Store is what the service reads and writes.
type Store interface {
	Rows
	RunFence(ctx context.Context, runID int64) (state string, fence int64, err error)
	HasAttestation(ctx context.Context, runID, fence int64) (bool, error)
	SaveAttestation(ctx context.Context, a store.Attestation) (bool, error)
	RunAttestation(ctx context.Context, runID int64) (store.Attestation, error)
	summary.HeadlineStore
}

// Service attests finished runs and verifies them.
type Service struct {
	Store  Store
	Signer *Signer
}

// AttestRun signs the run's results once it has ended, unless this
// working of it (its fence) is signed already: a rescoring queues the same
// job and must not sign rows that may have been changed since.
func (s *Service) AttestRun(ctx context.Context, runID int64) error {
	state, fence, err := s.Store.RunFence(ctx, runID)
	if err != nil {
		return err
	}
	if state == "queued" || state == "running" {
		return nil
	}
	if done, err := s.Store.HasAttestation(ctx, runID, fence); err != nil || done {
		return err
	}
	// The figures pages show first follow from the rows signed here: the
	// server's count, not the agent's (summary.RecomputeHeadline).
	if err := summary.RecomputeHeadline(ctx, s.Store, runID); err != nil {
		return err
	}
	a, err := s.Signer.Sign(ctx, s.Store, runID, fence)
	if err != nil {
		return err
	}
	_, err = s.Store.SaveAttestation(ctx, a)
	return err
}

// VerifyRun checks the run's attestation against its rows as they are now.
func (s *Service) VerifyRun(ctx context.Context, runID int64) (store.Attestation, Verification, error) {
	a, err := s.Store.RunAttestation(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return a, Verification{}, ErrNotAttested
	}
	if err != nil {
		return a, Verification{}, err
	}
	v, err := s.Signer.Verify(ctx, s.Store, a)
	if err != nil || !v.Valid {
		return a, v, err
	}
	// The rows are as signed; the run's headline figures must still be
	// what they give, or a page shows numbers no signature covers.
	problem, err := summary.CheckHeadline(ctx, s.Store, runID)
	if err != nil {
		return a, v, err
	}
	if problem != "" {
		v.Valid, v.Problem = false, "the result rows are as signed, but "+problem
	}
	return a, v, err
}
