// Package devdb runs a private PostgreSQL cluster from the machine's own
// PostgreSQL binaries, for `make run` (kept between runs) and `make test`
// (thrown away afterwards), so neither needs a database set up by hand.
package devdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries explains what to do on a machine without PostgreSQL.
var ErrNoBinaries = errors.New(`PostgreSQL server binaries (initdb, pg_ctl) were not found.
Do one of these:
  - install them:        sudo apt-get install -y --no-install-recommends postgresql
                         (the service need not run; Ruckus starts its own private cluster)
  - use a database:      export DATABASE_URL=postgres://user:password@host:5432/ruckus
  - use containers:      docker compose up`)

// superuser is the cluster's only role; the cluster is private to Ruckus.
const superuser = "ruckus"

// Cluster is a PostgreSQL cluster in a directory of its own, listening on
// loopback only.
type Cluster struct {
	Dir    string // the data directory
	Port   int
	BinDir string
	// Tuned for throwaway use: no fsync, no full-page writes. Never for data
	// someone wants to keep.
	Throwaway bool
	Log       io.Writer

	owner *user.User // the OS user that runs postgres (postgres when we are root)
}

// FindBinaries returns the directory holding initdb and pg_ctl: from PATH,
// from pg_config, or the newest /usr/lib/postgresql/N/bin.
func FindBinaries() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// FreePort asks the kernel for an unused loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Ensure creates the cluster when Dir holds none yet. PostgreSQL refuses to
// run as root, so when we are root the directory is given to the postgres
// user and the binaries run as that user.
func (c *Cluster) Ensure(ctx context.Context) error {
	if c.Log == nil {
		c.Log = io.Discard
	}
	// The parent holds the password file during initdb and must be
	// reachable by the user PostgreSQL runs as.
	if err := os.MkdirAll(filepath.Dir(c.Dir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(c.Dir), err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root, PostgreSQL must run as another user, and there is no 'postgres' user: %w", err)
		}
		c.owner = u
		if err := reachable(c.Dir, u); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "PG_VERSION")); err == nil {
		return nil
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", c.Dir, err)
	}
	if err := c.chown(c.Dir); err != nil {
		return err
	}
	password := make([]byte, 24)
	_, _ = rand.Read(password)
	pw := hex.EncodeToString(password)
	pwFile := filepath.Join(filepath.Dir(c.Dir), "."+filepath.Base(c.Dir)+".pw")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		return fmt.Errorf("write password file: %w", err)
	}
	defer os.Remove(pwFile)
	if err := c.chown(pwFile); err != nil {
		return err
	}
	fmt.Fprintf(c.Log, "creating a private PostgreSQL cluster in %s\n", c.Dir)
	if err := c.run(ctx, "initdb", "-D", c.Dir, "-U", superuser, "--pwfile", pwFile,
		"--auth-host=scram-sha-256", "--auth-local=peer", "-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	conf := "\n# Added by Ruckus: loopback only, no Unix socket.\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n"
	if c.Throwaway {
		conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 300\n"
	}
	f, err := os.OpenFile(filepath.Join(c.Dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("configure cluster: %w", err)
	}
	_, werr := f.WriteString(conf)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("configure cluster: %w", err)
	}
	// The password lives beside the data, readable by the owner only.
	return os.WriteFile(c.passwordPath(), []byte(pw), 0o600)
}

func (c *Cluster) passwordPath() string { return filepath.Join(c.Dir, "ruckus-password") }

// Start starts the server and waits until it accepts connections. A server
// already running on this directory (left by an interrupted run) is reused.
func (c *Cluster) Start(ctx context.Context) error {
	if c.running(ctx) {
		// postmaster.pid's fourth line is the port it listens on.
		pid, _ := os.ReadFile(filepath.Join(c.Dir, "postmaster.pid"))
		if lines := strings.Split(string(pid), "\n"); len(lines) > 3 && strings.TrimSpace(lines[3]) != strconv.Itoa(c.Port) {
			return fmt.Errorf("PostgreSQL is already running in %s on port %s, not %d: stop it (pg_ctl -D %s stop) or use that port", c.Dir, strings.TrimSpace(lines[3]), c.Port, c.Dir)
		}
		fmt.Fprintf(c.Log, "PostgreSQL already running in %s\n", c.Dir)
		return nil
	}
	err := c.run(ctx, "pg_ctl", "-D", c.Dir, "-l", filepath.Join(c.Dir, "server.log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d", c.Port), "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "server.log"))
		return fmt.Errorf("start PostgreSQL on port %d: %w\n%s", c.Port, err, Tail(string(log), 10))
	}
	return nil
}

// Stop shuts the server down (fast mode: sessions are ended, data is kept).
func (c *Cluster) Stop(ctx context.Context) error {
	if !c.running(ctx) {
		return nil
	}
	return c.run(ctx, "pg_ctl", "-D", c.Dir, "-m", "fast", "-w", "-t", "60", "stop")
}

func (c *Cluster) running(ctx context.Context) bool {
	cmd := c.command(ctx, "pg_ctl", "-D", c.Dir, "status")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	return cmd.Run() == nil
}

// URL is the connection string for database name.
func (c *Cluster) URL(name string) (string, error) {
	pw, err := os.ReadFile(c.passwordPath())
	if err != nil {
		return "", fmt.Errorf("read cluster password: %w", err)
	}
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", superuser, strings.TrimSpace(string(pw)), c.Port, name), nil
}

// CreateDatabase creates database name unless it exists, and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	adminURL, err := c.URL("postgres")
	if err != nil {
		return "", err
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("connect to the private cluster: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return c.URL(name)
}

func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.BinDir, name), args...)
	cmd.Dir = os.TempDir()
	cmd.Stdout, cmd.Stderr = c.Log, c.Log
	// Own process group: a Ctrl-C at the terminal reaches us, and we stop the
	// server in order, rather than it dying under us mid-shutdown.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c.owner != nil {
		uid, _ := strconv.Atoi(c.owner.Uid)
		gid, _ := strconv.Atoi(c.owner.Gid)
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		cmd.Env = append(os.Environ(), "HOME="+c.owner.HomeDir, "USER=postgres", "LOGNAME=postgres")
	}
	return cmd
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	return c.command(ctx, name, args...).Run()
}

func (c *Cluster) chown(path string) error {
	if c.owner == nil {
		return nil
	}
	uid, _ := strconv.Atoi(c.owner.Uid)
	gid, _ := strconv.Atoi(c.owner.Gid)
	if err := os.Chown(path, uid, gid); err != nil {
		return fmt.Errorf("give %s to the postgres user: %w", path, err)
	}
	return nil
}

// reachable checks that u can traverse every directory above dir, which
// PostgreSQL needs and which fails obscurely when a parent is private.
func reachable(dir string, u *user.User) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			st, _ := fi.Sys().(*syscall.Stat_t)
			owned := st != nil && int(st.Uid) == uid
			if !owned && fi.Mode().Perm()&0o001 == 0 {
				return fmt.Errorf("the postgres user cannot reach %s because %s is not searchable by others (chmod o+x %s), or choose another directory with RUCKUS_PGDATA", dir, p, p)
			}
		}
		if p == "/" || p == "." {
			return nil
		}
	}
}

// Tail is the last n lines of s, for the end of a log in an error.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
