package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/ruckus/ruckus/app/store"
)

// agentPassword is what a chosen password may hold: it goes into a URL
// and a CREATE ROLE statement unescaped.
var agentPassword = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

const agentUsage = "ruckus agent create NAME [--runtime RT[,RT…] --hardware PROFILE] [--password P] [--key-file FILE] | ruckus agent approve NAME | ruckus agent revoke NAME"

// cmdAgent manages agents' own PostgreSQL logins: `create` makes the role
// (a member of the restricted ruckus_agent group) and the agent's key, and
// prints the DATABASE_URL and RUCKUS_AGENT_KEY agentd on the GPU node
// uses, and grants what it serves (--runtime, --hardware: its queues);
// `approve` grants what an agent declares; `revoke` ends its access.
func cmdAgent(ctx context.Context, args []string, out io.Writer) error {
	if len(args) < 2 || (args[0] != "create" && args[0] != "revoke" && args[0] != "approve") {
		return fmt.Errorf("%w: %s", errUsage, agentUsage)
	}
	action, name := args[0], args[1]
	fs := newFlags("agent "+action, agentUsage, out)
	password := fs.String("password", "", "create: the role's password (default: generated); letters, digits, '-' and '_'")
	keyFile := fs.String("key-file", "", "create: write the agent's key to FILE (mode 0600) instead of printing it; agentd reads it with --key-file")
	runtimes := fs.String("runtime", "", "create: the runtimes the agent serves, comma-separated (sim, vllm, …); with --hardware")
	hardware := fs.String("hardware", "", "create: the hardware profile the agent serves (such as h100-80gb-x1 or cpu); with --runtime")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if err := store.CheckAgentName(name); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	st, cfg, closeDB, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	if action == "approve" {
		return approveAgent(ctx, st, name, out)
	}
	if action == "revoke" {
		role, err := st.RevokeAgentRole(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("agent %q has no role of its own to revoke", name)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "revoked agent %s: role %s dropped, agent deactivated\n", name, role.Role)
		return nil
	}
	pw := *password
	if pw == "" {
		pw = newAgentPassword()
	}
	if !agentPassword.MatchString(pw) {
		return fmt.Errorf("%w: --password must be 16 or more letters, digits, '-' or '_'", errUsage)
	}
	grant := store.AgentGrant{Profile: *hardware}
	if *runtimes != "" {
		grant.Runtimes = strings.Split(*runtimes, ",")
	}
	if err := grant.Check(); err != nil {
		return fmt.Errorf("%w: --runtime and --hardware: %v", errUsage, err)
	}
	role, err := st.CreateAgentRole(ctx, name, pw, grant)
	if err != nil {
		return err
	}
	if grant.Profile != "" {
		fmt.Fprintf(out, "agent %s serves %s on %s (its queues: those alone, whatever it declares)\n", name, strings.Join(grant.Runtimes, ", "), grant.Profile)
	} else {
		fmt.Fprintf(out, "agent %s serves nothing until an administrator approves what it declares (Agents page, or ruckus agent approve %s)\n", name, name)
	}
	u, err := store.AgentDatabaseURL(cfg.DatabaseURL, role, pw)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "created PostgreSQL role %s for agent %s (limited to what an agent does)\n", role.Role, name)
	fmt.Fprintf(out, "run on the GPU node (change the host if the node reaches PostgreSQL by another address;\n")
	fmt.Fprintf(out, "through PgBouncer, its address and --pgbouncer; the key is given once, only its hash is kept):\n")
	if *keyFile != "" {
		if err := os.WriteFile(*keyFile, []byte(role.Key+"\n"), 0o600); err != nil {
			return fmt.Errorf("--key-file: %w (the key was replaced: run create again)", err)
		}
		fmt.Fprintf(out, "DATABASE_URL='%s' agentd run --name %s --key-file %s\n", u, name, *keyFile)
		return nil
	}
	fmt.Fprintf(out, "DATABASE_URL='%s' RUCKUS_AGENT_KEY='%s' agentd run --name %s\n", u, role.Key, name)
	return nil
}

// approveAgent grants agent name what it declares.
func approveAgent(ctx context.Context, st *store.Store, name string, out io.Writer) error {
	agents, err := st.ListAgents(ctx)
	if err != nil {
		return err
	}
	for _, a := range agents {
		if a.Name != name {
			continue
		}
		if a.DeclaredProfile == "" {
			return fmt.Errorf("agent %q has declared nothing yet: start it first", name)
		}
		if err := st.ApproveAgent(ctx, a.ID); err != nil {
			return err
		}
		fmt.Fprintf(out, "agent %s serves %s on %s\n", name, strings.Join(a.DeclaredRuntimes, ", "), a.DeclaredProfile)
		return nil
	}
	return fmt.Errorf("no agent %q", name)
}

// newAgentPassword is a random password for an agent's role (192 bits, in
// the characters agentPassword allows).
func newAgentPassword() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
