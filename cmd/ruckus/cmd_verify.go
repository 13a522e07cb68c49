package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ruckus/ruckus/app/attest"
)

// errTampered: a run's results are not as they were signed (exit code 1,
// the message says which row).
var errTampered = errors.New("verification failed")

// cmdVerify is `ruckus verify RUN`: it reads the run's result rows from
// the database, recomputes their digest and checks it, and the signature,
// against the server's key (RUCKUS_ATTESTATION_KEY or the one the
// database keeps); --public-key pins the key expected.
func cmdVerify(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("verify", "ruckus verify RUN [--public-key BASE64]", out)
	pinned := fs.String("public-key", "", "the server's ed25519 public key (base64) the signature must be made with, as GET /api/v1/runs/{id}/attestation shows it")
	if len(args) == 0 {
		return fmt.Errorf("%w: ruckus verify RUN [--public-key BASE64]", errUsage)
	}
	arg, err := parseFileArg(fs, args)
	if err != nil {
		return err
	}
	runID, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || runID < 1 {
		return fmt.Errorf("%w: RUN must be a run id, a whole number from 1 (got %q)", errUsage, arg)
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
