package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/migrations"
)

// openStore loads the settings and connects, for the one-shot commands.
func openStore(ctx context.Context) (*store.Store, config.Config, func(), error) {
	cfg, err := config.FromEnvironment()
	if err != nil {
		return nil, cfg, nil, err
	}
	pool, err := openPool(ctx, cfg.DatabaseURL, 0)
	if err != nil {
		return nil, cfg, nil, err
	}
	return store.New(pool), cfg, pool.Close, nil
}

func cmdMigrate(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: ruckus migrate up|down [--all]|status", errUsage)
	}
	fs := newFlags("migrate "+args[0], "ruckus migrate up|down [--all]|status", out)
	all := fs.Bool("all", false, "with down: roll back every Ruckus migration and River's schema")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	st, _, closeDB, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	m, err := migrations.New(st.Pool())
	if err != nil {
		return err
	}
	switch args[0] {
	case "up":
		applied, err := m.Up(ctx)
		for _, v := range applied {
			fmt.Fprintf(out, "applied %04d\n", v)
		}
		if err == nil && len(applied) == 0 {
			fmt.Fprintln(out, "schema is up to date")
		}
		return err
	case "down":
		undone, err := m.Down(ctx, *all)
		for _, v := range undone {
			fmt.Fprintf(out, "rolled back %04d\n", v)
		}
		if err == nil && *all {
			fmt.Fprintln(out, "rolled back River's schema")
		}
		if err == nil && len(undone) == 0 && !*all {
			fmt.Fprintln(out, "nothing to roll back")
		}
		return err
	case "status":
		st, err := m.Status(ctx)
		if err != nil {
			return err
		}
		for _, s := range st {
			state := "pending"
			if s.AppliedAt != nil {
				state = "applied " + s.AppliedAt.Format("2006-01-02 15:04:05")
			}
			fmt.Fprintf(out, "%04d %-30s %s\n", s.Version, s.Name, state)
		}
		_, river, err := m.Pending(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "River: %d migrations pending\n", river)
		return nil
	}
	return fmt.Errorf("%w: unknown migrate command %q (up, down or status)", errUsage, args[0])
}

func cmdUser(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("%w: ruckus user create --email E [--password P] [--name N] [--admin]", errUsage)
	}
	fs := newFlags("user create", "ruckus user create --email E [--password P] [--name N] [--admin]", out)
	email := fs.String("email", "", "the user's email (required)")
	password := fs.String("password", "", "the password (8–72 characters); generated and printed when omitted")
	name := fs.String("name", "", "display name")
	admin := fs.Bool("admin", false, "make the user an administrator")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	e := strings.ToLower(strings.TrimSpace(*email))
	if e == "" || !strings.Contains(e, "@") {
		return fmt.Errorf("%w: --email must be an email address", errUsage)
	}
	pw, generated := *password, false
	if pw == "" {
		pw, generated = auth.GeneratePassword(), true
	}
	if err := auth.CheckPolicy(pw); err != nil {
		return fmt.Errorf("%w: --password: %v", errUsage, err)
	}
	st, cfg, closeDB, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	hasher, err := auth.NewPasswords(cfg.PasswordCost)
	if err != nil {
		return err
	}
	hash, err := hasher.Hash(pw)
	if err != nil {
		return err
	}
	role := store.RoleUser
	if *admin {
		role = store.RoleAdmin
	}
	u, err := st.CreateUser(ctx, store.NewUser{Email: e, Name: strings.TrimSpace(*name), PasswordHash: hash, Role: role})
	if errors.Is(err, store.ErrEmailTaken) {
		return fmt.Errorf("a user with the email %s already exists", e)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "created %s %s (id %d)\n", role, u.Email, u.ID)
	if generated {
		fmt.Fprintf(out, "password: %s\n", pw)
	}
	return nil
}

func cmdToken(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("%w: ruckus token create --email E [--name N]", errUsage)
	}
	fs := newFlags("token create", "ruckus token create --email E [--name N]", out)
	email := fs.String("email", "", "the user the token acts as (required)")
	name := fs.String("name", "cli", "a name to recognise the token by")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if strings.TrimSpace(*email) == "" || strings.TrimSpace(*name) == "" {
		return fmt.Errorf("%w: --email and --name must not be empty", errUsage)
	}
	st, _, closeDB, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	u, err := st.UserByEmail(ctx, strings.ToLower(strings.TrimSpace(*email)))
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("there is no user with the email %s", *email)
	}
	if err != nil {
		return err
	}
	if u.Disabled() {
		return fmt.Errorf("the user %s is disabled", u.Email)
	}
	token, prefix, hash := auth.NewAPIToken()
	if _, err := st.CreateAPIToken(ctx, u.ID, strings.TrimSpace(*name), prefix, hash); err != nil {
		return err
	}
	fmt.Fprintln(out, token)
	return nil
}
