// Package backup dumps Ruckus's database (its own tables and River's, in
// one consistent snapshot) with pg_dump in the custom format, and restores
// such a dump into an empty database with pg_restore, all or nothing.
package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/devdb"
)

// Tool finds a PostgreSQL client program: on PATH, else beside the
// server binaries the development database uses.
func Tool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	dir, err := devdb.FindBinaries()
	if err == nil {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s was not found on PATH nor beside PostgreSQL's server binaries: install PostgreSQL's client programs (apt-get install postgresql-client)", name)
}

// pgxOnly are DATABASE_URL parameters pgx reads that libpq's programs
// would refuse.
var pgxOnly = []string{"pool_", "statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode", "min_read_buffer_size"}

// libpq splits DATABASE_URL into a connection string libpq's programs
// accept, without the password, and the environment that carries the
// password (PGPASSWORD), so it never shows in the process list.
func libpq(dbURL string) (string, []string, error) {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, errors.New("DATABASE_URL must be a postgres:// URL")
	}
	env := os.Environ()
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			env = append(env, "PGPASSWORD="+pw)
		}
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	for k := range q {
		for _, p := range pgxOnly {
			if strings.HasPrefix(k, p) {
				q.Del(k)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), env, nil
}

// Stats says what a backup or restore did.
type Stats struct {
	Bytes    int64
	Duration time.Duration
	// Roles are the roles a restore created because the dump grants to
	// them (without login).
	Roles []string
}

// run runs a client program and returns its standard output; a failure
// carries the end of what it said.
func run(ctx context.Context, env []string, stdout io.Writer, name string, args ...string) error {
	path, err := Tool(name)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, devdb.Tail(stderr.String(), 10))
	}
	return nil
}

// Dump writes a consistent dump of the database at dbURL to file, in
// pg_dump's custom format. It is written beside file and renamed into
// place when complete, so file is never half-written; an existing file is
// not replaced.
func Dump(ctx context.Context, dbURL, file string) (Stats, error) {
	start := time.Now()
	if _, err := os.Stat(file); err == nil {
		return Stats{}, fmt.Errorf("%s exists: choose a new file (a backup never overwrites one)", file)
	}
	conn, env, err := libpq(dbURL)
	if err != nil {
		return Stats{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.partial")
	if err != nil {
		return Stats{}, fmt.Errorf("cannot write beside %s: %w", file, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// One snapshot: pg_dump reads every table in a single repeatable-read
	// transaction, so River's jobs and the runs they belong to agree.
	if err := run(ctx, env, io.Discard, "pg_dump", "--format=custom", "--file="+tmp.Name(), "--dbname="+conn); err != nil {
		return Stats{}, err
	}
	fi, err := os.Stat(tmp.Name())
	if err != nil {
		return Stats{}, err
	}
	if err := os.Link(tmp.Name(), file); err != nil {
		return Stats{}, fmt.Errorf("cannot create %s: %w", file, err)
	}
	return Stats{Bytes: fi.Size(), Duration: time.Since(start)}, nil
}

// ErrNotEmpty: a restore goes into an empty database only.
var ErrNotEmpty = errors.New("the database at DATABASE_URL is not empty")

const roleName = `(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`

// grants and policies find the roles a dump's SQL names: pg_dump writes
// each GRANT and REVOKE on one line ending in the grantee, and a policy's
// roles after TO.
var (
	grants   = regexp.MustCompile(`(?m)^(?:GRANT|REVOKE)\b[^;\n]*\b(?:TO|FROM) (` + roleName + `)(?: WITH GRANT OPTION)?;$`)
	policies = regexp.MustCompile(`(?m)^CREATE POLICY\b[^;\n]*? TO (` + roleName + `(?:, ` + roleName + `)*)(?: USING| WITH CHECK|;)`)
	oneRole  = regexp.MustCompile(roleName)
)

// Roles lists the roles a dump's SQL grants to or writes policies for
// (never PUBLIC), sorted.
func Roles(sql []byte) []string {
	seen := map[string]bool{}
	var found [][]byte
	for _, m := range grants.FindAllSubmatch(sql, -1) {
		found = append(found, m[1])
	}
	for _, m := range policies.FindAllSubmatch(sql, -1) {
		found = append(found, oneRole.FindAll(m[1], -1)...)
	}
	for _, f := range found {
		r := string(f)
		if strings.HasPrefix(r, `"`) {
			r = strings.ReplaceAll(r[1:len(r)-1], `""`, `"`)
		}
		if !strings.EqualFold(r, "public") && r != "" {
			seen[r] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Restore loads file, a Dump, into the empty database at dbURL in one
// transaction: the restored database is the dumped one, or nothing
// changed. Roles the dump grants to that the cluster lacks are created
// first, without login (ruckus_agent, and the agents' roles of the old
// cluster: `ruckus agent create` gives an agent a login again).
func Restore(ctx context.Context, dbURL, file string) (Stats, error) {
	start := time.Now()
	fi, err := os.Stat(file)
	if err != nil {
		return Stats{}, err
	}
	conn, env, err := libpq(dbURL)
	if err != nil {
		return Stats{}, err
	}
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return Stats{}, fmt.Errorf("cannot reach the database at DATABASE_URL: %w", err)
	}
	defer db.Close(ctx)
	var objects int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'`).Scan(&objects); err != nil {
		return Stats{}, err
	}
	if objects > 0 {
		return Stats{}, fmt.Errorf("%w (%d tables, indexes or sequences): restore into a new, empty database (createdb) and point DATABASE_URL at it", ErrNotEmpty, objects)
	}
	var schema bytes.Buffer
	if err := run(ctx, env, &schema, "pg_restore", "--schema-only", "--file=-", file); err != nil {
		return Stats{}, fmt.Errorf("%s is not a backup `ruckus backup` made (a pg_dump custom-format archive): %w", file, err)
	}
	roles := Roles(schema.Bytes())
	var created []string
	for _, r := range roles {
		var exists bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, r).Scan(&exists); err != nil {
			return Stats{}, err
		}
		if exists {
			continue
		}
		if _, err := db.Exec(ctx, "CREATE ROLE "+pgx.Identifier{r}.Sanitize()+" NOLOGIN"); err != nil {
			return Stats{}, fmt.Errorf("the backup grants to role %q, which this cluster lacks and DATABASE_URL's role cannot create (%w): create it first (CREATE ROLE %s NOLOGIN)", r, err, pgx.Identifier{r}.Sanitize())
		}
		created = append(created, r)
	}
	// Objects are owned by DATABASE_URL's role here, whoever owned them
	// there; every grant is restored as it was.
	if err := run(ctx, env, io.Discard, "pg_restore", "--no-owner", "--single-transaction", "--exit-on-error", "--dbname="+conn, file); err != nil {
		return Stats{Roles: created}, err
	}
	return Stats{Bytes: fi.Size(), Duration: time.Since(start), Roles: created}, nil
}
