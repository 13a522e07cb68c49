package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ruckus/ruckus/app/backup"
	"github.com/ruckus/ruckus/app/config"
)

// fileAndDatabase reads the one FILE argument of `ruckus backup` and
// `ruckus restore`, and DATABASE_URL.
func fileAndDatabase(name string, args []string, out io.Writer) (string, string, error) {
	synopsis := "ruckus " + name + " FILE"
	if len(args) == 0 {
		return "", "", fmt.Errorf("%w: %s", errUsage, synopsis)
	}
	file, err := parseFileArg(newFlags(name, synopsis, out), args)
	if err != nil {
		return "", "", err
	}
	cfg, err := config.FromEnvironment()
	return file, cfg.DatabaseURL, err
}

// cmdBackup is `ruckus backup FILE`: a consistent dump of Ruckus's and
// River's tables (pg_dump's custom format) of DATABASE_URL.
func cmdBackup(ctx context.Context, args []string, out io.Writer) error {
	file, db, err := fileAndDatabase("backup", args, out)
	if err != nil {
		return err
	}
	st, err := backup.Dump(ctx, db, file)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "backed up to %s: %.1f MB in %s\n", file, float64(st.Bytes)/1e6, st.Duration.Round(1e6))
	return nil
}

// cmdRestore is `ruckus restore FILE`: a backup into the empty database
// at DATABASE_URL, all or nothing.
func cmdRestore(ctx context.Context, args []string, out io.Writer) error {
	file, db, err := fileAndDatabase("restore", args, out)
	if err != nil {
		return err
	}
	st, err := backup.Restore(ctx, db, file)
	if len(st.Roles) > 0 {
		fmt.Fprintf(out, "created the roles the backup grants to, without login: %s\n", strings.Join(st.Roles, ", "))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "restored %s (%.1f MB) in %s\n", file, float64(st.Bytes)/1e6, st.Duration.Round(1e6))
	fmt.Fprintln(out, "agents log in with roles of their own: run `ruckus agent create NAME` for each agent whose role this cluster lacks, then `ruckus migrate status`")
	return nil
}
