package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/ruckus/ruckus/app/attest"
)

// errTampered: a run's results are not as they were signed (exit code 1,
// the message says which row).
var errTampered = errors.New("verification failed")

// cmdVerify is `ruckus verify RUN...`: for each run it reads the result
// rows from the database, recomputes their digest and checks it, and the
// signature, against the server's key (RUCKUS_ATTESTATION_KEY or the one
// the database keeps); --public-key pins the key expected. Every run named
// is checked, over one connection, and each failure is told; the exit is 1
// when any failed.
func cmdVerify(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("verify", "ruckus verify RUN... [--public-key BASE64]", out)
	pinned := fs.String("public-key", "", "the server's ed25519 public key (base64) the signature must be made with, as GET /api/v1/runs/{id}/attestation shows it")
	if len(args) == 0 {
		return fmt.Errorf("%w: ruckus verify RUN... [--public-key BASE64]", errUsage)
	}
	runIDs, err := parseRunArgs(fs, args)
	if err != nil {
		return err
	}
	st, cfg, closeDB, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	svc, err := newAttester(ctx, st, cfg, false)
	if err != nil {
		return err
	}
	key := base64.StdEncoding.EncodeToString(svc.Signer.PublicKey())
	if *pinned != "" && *pinned != key {
		return fmt.Errorf("%w: the server's key is %s, not the --public-key given", errTampered, key)
	}
	var failed []error
	for _, runID := range runIDs {
		if err := verifyOne(ctx, svc, key, runID, out); err != nil {
			if len(runIDs) == 1 || !(errors.Is(err, errTampered) || errors.Is(err, attest.ErrNotAttested)) {
				return err
			}
			fmt.Fprintln(out, "  "+err.Error())
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w: %d of %d runs (first: %v)", errTampered, len(failed), len(runIDs), failed[0])
	}
	return nil
}

// verifyOne checks one run and tells what it found.
func verifyOne(ctx context.Context, svc *attest.Service, key string, runID int64, out io.Writer) error {
	a, v, err := svc.VerifyRun(ctx, runID)
	if errors.Is(err, attest.ErrNotAttested) {
		return fmt.Errorf("run %d: %w", runID, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "run %d: %d result rows, signed %s with ed25519 key %s\n  signed digest  sha256:%s\n  current digest sha256:%s\n",
		runID, a.RowCount, a.SignedAt.UTC().Format("2006-01-02 15:04:05Z"), key, hex.EncodeToString(a.Digest), hex.EncodeToString(v.Digest))
	if !v.Valid {
		return fmt.Errorf("%w: run %d: %s", errTampered, runID, v.Problem)
	}
	fmt.Fprintln(out, "  intact: the results are as they were signed")
	return nil
}

// maxVerifyRuns bounds the runs one command checks.
const maxVerifyRuns = 100_000

// parseRunArgs reads the run ids among args (flags may come between
// them): each a whole number from 1, at least one, at most maxVerifyRuns.
func parseRunArgs(fs *flag.FlagSet, args []string) ([]int64, error) {
	var ids []int64
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		arg := fs.Arg(0)
		id, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || id < 1 {
			return nil, fmt.Errorf("%w: RUN must be a run id, a whole number from 1 (got %q)", errUsage, arg)
		}
		if len(ids) == maxVerifyRuns {
			return nil, fmt.Errorf("%w: at most %d runs at a time", errUsage, maxVerifyRuns)
		}
		ids, args = append(ids, id), fs.Args()[1:]
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: ruckus verify needs a RUN", errUsage)
	}
	return ids, nil
}
