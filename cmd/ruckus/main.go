// Command ruckus is the Ruckus server: the web UI and JSON API, plus the
// commands that manage its database, users and tokens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ruckus/ruckus/app/config"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `ruckus — benchmark open-weight LLMs on real hardware.

Usage:
  ruckus serve                          run the web server (settings from the environment)
  ruckus migrate up|down [--all]|status manage the database schema (Ruckus's and River's)
  ruckus user create --email E [--password P] [--name N] [--admin]
  ruckus token create --email E [--name N]   print a new API token for a user
  ruckus agent create NAME [--password P]    a PostgreSQL login of its own for agentd NAME; prints its DATABASE_URL
  ruckus agent revoke NAME              drop agent NAME's login and deactivate it
  ruckus dataset upload FILE [--name N] [--shared]   upload through the API (RUCKUS_URL, RUCKUS_TOKEN)
  ruckus bench submit FILE [--dry-run]  submit a benchmark manifest (YAML or JSON) through the API
  ruckus fleet submit FILE [--dry-run] [--wait] [--format summary|json] [--min-success RATE]
                                        submit a fleet manifest (Ruckus's or the fleet document's dialect) through the API;
                                        --wait follows it to the end and exits non-zero below --min-success
  ruckus fleet export ID [--dir DIR]    write a fleet's artifact tree (fleet.json, CSVs, report.html, per-scenario results)
  ruckus bench watch ID                 follow a benchmark's runs live until they finish
  ruckus results export RUN [--format csv|jsonl] [--output FILE]   download a run's results
  ruckus results import FILE --dataset ID --model M [--name N] [--scorer S]   results made elsewhere as a run
  ruckus backup FILE                    a consistent dump of the database (pg_dump, custom format) to a new FILE
  ruckus restore FILE                   a backup into the empty database at DATABASE_URL, all or nothing
  ruckus verify RUN... [--public-key K] check runs' results against their signed digests (DATABASE_URL)
  ruckus seed                           load the starter datasets and models (idempotent)
  ruckus sandbox [--concurrency N]      the worker that executes code answers (HumanEval, MBPP) in bubblewrap
  ruckus dev [-- AGENTD-RUN-ARGS…]      development: private PostgreSQL + migrate + server + one agentd (sim unless args follow --)
  ruckus dev-db exec -- CMD [ARGS…]     development: run CMD against a throwaway PostgreSQL
  ruckus pgbouncer [--listen HOST:PORT] [--setup-auth]   PgBouncer (transaction pooling) between agents and the database
  ruckus version                        print the version

Settings come from environment variables (DATABASE_URL, RUCKUS_ADDR, …) and
an optional YAML file named by RUCKUS_CONFIG; see docs/configuration.md.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "--version":
		fmt.Fprintln(stdout, "ruckus", version)
		return 0
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = cmdMigrate(ctx, args[1:], stdout)
	case "user":
		err = cmdUser(ctx, args[1:], stdout)
	case "agent":
		err = cmdAgent(ctx, args[1:], stdout)
	case "token":
		err = cmdToken(ctx, args[1:], stdout)
	case "seed":
		err = cmdSeed(ctx, args[1:], stdout)
	case "bench":
		err = cmdBench(ctx, args[1:], stdout)
	case "fleet":
		err = cmdFleet(ctx, args[1:], stdout)
	case "dataset":
		err = cmdDataset(ctx, args[1:], stdout)
	case "results":
		err = cmdResults(ctx, args[1:], stdout)
	case "backup":
		err = cmdBackup(ctx, args[1:], stdout)
	case "restore":
		err = cmdRestore(ctx, args[1:], stdout)
	case "verify":
		err = cmdVerify(ctx, args[1:], stdout)
	case "sandbox":
		err = cmdSandbox(ctx, args[1:], stdout, stderr)
	case "dev":
		err = cmdDev(ctx, args[1:], stdout, stderr)
	case "dev-db":
		return cmdDevDB(ctx, args[1:], stdout, stderr)
	case "pgbouncer":
		err = cmdPgBouncer(ctx, args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "ruckus: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "ruckus:", err)
		var cerr *config.Error
		if errors.As(err, &cerr) || errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")

// parseFileArg parses args with fs, accepting flags before or after the one
// FILE argument the API commands take, and returns that FILE.
func parseFileArg(fs *flag.FlagSet, args []string) (string, error) {
	var file string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		if file != "" {
			return "", fmt.Errorf("%w: one FILE at a time", errUsage)
		}
		file, args = fs.Arg(0), fs.Args()[1:]
	}
	if file == "" {
		return "", fmt.Errorf("%w: ruckus %s needs a FILE", errUsage, fs.Name())
	}
	return file, nil
}

// newFlags makes a flag set that prints its usage to stdout on --help and
// returns errors instead of exiting.
func newFlags(name, synopsis string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}
