package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"riverqueue.com/riverui"

	"github.com/ruckus/ruckus/app/attest"
	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/metrics"
	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/riverlog"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/assets"
	"github.com/ruckus/ruckus/handlers"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/migrations"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "ruckus serve [--sim-accuracy MODEL=P,…]", stdout)
	simAcc := fs.String("sim-accuracy", os.Getenv(simAccuracyEnv), "default share of right answers per model on the simulated runtime, such as acme/small-1b=0.55,acme/large-8b=0.8 ("+simAccuracyEnv+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := bench.ParseSimAccuracy(*simAcc); err != nil {
		return err
	}
	os.Setenv(simAccuracyEnv, *simAcc)
	cfg, err := config.FromEnvironment()
	if err != nil {
		return err
	}
	return serve(ctx, cfg, stdout, stderr, nil)
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openPool connects to DATABASE_URL with at most size connections (0:
// pgx's default, or the URL's pool_max_conns).
func openPool(ctx context.Context, url string, size int) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if size > 0 {
		pc.MaxConns = int32(min(size, 1000))
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot reach the database at DATABASE_URL: %w", err)
	}
	return pool, nil
}

// serve runs the web server until ctx ends, then shuts down gracefully.
// ready, when not nil, is closed once the server listens.
func serve(ctx context.Context, cfg config.Config, stdout, stderr io.Writer, ready chan<- string) error {
	logger := newLogger(cfg, stderr)
	pool, err := openPool(ctx, cfg.DatabaseURL, cfg.DBPoolSize)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	mig, err := checkSchema(ctx, pool)
	if err != nil {
		return err
	}
	passwords, key, err := prepareSignIn(ctx, st, cfg, stdout)
	if err != nil {
		return err
	}
	manifest, err := assets.New()
	if err != nil {
		return err
	}
	attester, err := newAttester(ctx, st, cfg, true)
	if err != nil {
		return err
	}
	guard, err := webhookGuard(cfg)
	if err != nil {
		return err
	}
	benchmarks, rc, err := startJobs(ctx, pool, st, cfg, jobDeps{attester: attester, guard: guard}, logger)
	if err != nil {
		return err
	}
	ui, err := startJobsUI(ctx, rc, logger)
	if err != nil {
		return err
	}
	obs, err := startMetrics(ctx, st, pool, cfg, logger)
	if err != nil {
		return err
	}
	limits := datasetLimits(cfg)
	proxies, err := handlers.ParseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return fmt.Errorf("RUCKUS_TRUSTED_PROXIES: %w", err)
	}
	providers, err := readProviders(cfg.ProvidersFile)
	if err != nil {
		return err
	}
	app := handlers.New(withSettings(cfg, handlers.Deps{
		Store:          st,
		Providers:      providers,
		Uploader:       &ingest.Uploader{Store: st, Limits: limits},
		Benchmarks:     benchmarks,
		JobsUI:         ui,
		DatasetLimits:  limits,
		Logger:         logger,
		Version:        version,
		Assets:         manifest,
		Passwords:      passwords,
		SessionKey:     key,
		TrustedProxies: proxies,
		Ready:          readiness(st, mig),
		ObserveRequest: obs,
		Attestations:   attester,
		WebhookGuard:   guard,
	}))
	return listenUntilDone(ctx, app, rc, cfg, logger, ready)
}

// withSettings is d with the web layer's limits and durations from cfg.
func withSettings(cfg config.Config, d handlers.Deps) handlers.Deps {
	d.SessionTTL = cfg.SessionTTL
	d.SignInAttempts = cfg.SignInAttempts
	d.SignInWindow = cfg.SignInWindow
	d.MaxRequestBytes = cfg.MaxRequestBytes
	d.AgentStaleAfter = cfg.AgentStaleAfter
	d.GridCO2 = cfg.GridCO2
	d.LiveFragmentTTL = cfg.LiveFragmentTTL
	d.ExportsPerUser = cfg.ExportsPerUser
	d.ExportsTotal = cfg.ExportsTotal
	d.ExportStallTimeout = cfg.ExportStallTimeout
	d.APIRatePerToken = cfg.APIRatePerToken
	d.APIRatePerUser = cfg.APIRatePerUser
	d.APIRateWindow = cfg.APIRateWindow
	return d
}

// startMetrics serves the server's Prometheus metrics on
// RUCKUS_METRICS_ADDR until ctx ends, and returns what the web layer
// records each request's duration with (nil when metrics are off).
func startMetrics(ctx context.Context, st *store.Store, pool *pgxpool.Pool, cfg config.Config, logger *slog.Logger) (func(route, method string, code int, d time.Duration), error) {
	if cfg.MetricsAddr == "off" {
		return nil, nil
	}
	m, err := metrics.NewServer(ctx, st, pool, cfg.AgentStaleAfter, logger)
	if err != nil {
		return nil, err
	}
	ln, err := metrics.Listen(cfg.MetricsAddr)
	if metrics.Taken(err) {
		// Another process (a second server on this host) has the port:
		// the server still serves, without metrics. A bad address is a
		// mistake to fix at start; a taken one is not.
		logger.Warn("metrics port taken: serving without /metrics (set RUCKUS_METRICS_ADDR to another port, or off)", "addr", cfg.MetricsAddr, "err", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("RUCKUS_METRICS_ADDR: %w", err)
	}
	logger.Info("metrics listening", "addr", ln.Addr().String())
	go func() {
		if err := metrics.Serve(ctx, ln, m.Registry, logger); err != nil {
			logger.Error("metrics server stopped", "err", err)
		}
	}()
	return m.ObserveRequest, nil
}

// checkSchema refuses a database whose schema is behind this binary.
func checkSchema(ctx context.Context, pool *pgxpool.Pool) (*migrations.Migrator, error) {
	mig, err := migrations.New(pool)
	if err != nil {
		return nil, err
	}
	if app, rv, err := mig.Pending(ctx); err != nil {
		return nil, err
	} else if app+rv > 0 {
		return nil, fmt.Errorf("the database schema is behind this binary (%d Ruckus and %d River migrations pending): run `ruckus migrate up`", app, rv)
	}
	return mig, nil
}

// prepareSignIn makes the password hasher, the first administrator when
// there is none, and the key that signs session cookies (RUCKUS_SESSION_KEY,
// else one generated once and kept in the database).
func prepareSignIn(ctx context.Context, st *store.Store, cfg config.Config, stdout io.Writer) (*auth.Passwords, []byte, error) {
	passwords, err := auth.NewPasswords(cfg.PasswordCost)
	if err != nil {
		return nil, nil, err
	}
	if err := bootstrapAdmin(ctx, st, passwords, cfg, stdout); err != nil {
		return nil, nil, err
	}
	key := []byte(cfg.SessionKey)
	if len(key) == 0 {
		key, err = st.ServerSecret(ctx, "session_hash_key", func() []byte {
			b := make([]byte, 64)
			_, _ = rand.Read(b)
			return b
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return passwords, key, nil
}

// attestationSecret names the attestation key's seed in server_secrets.
const attestationSecret = "attestation_ed25519_seed"

// newAttester makes what signs finished runs' results and verifies them,
// with the ed25519 key from RUCKUS_ATTESTATION_KEY, else one generated
// once and kept in the database, as the session key is. With create
// false a key is never made (ruckus verify).
func newAttester(ctx context.Context, st *store.Store, cfg config.Config, create bool) (*attest.Service, error) {
	seed, err := base64.StdEncoding.DecodeString(cfg.AttestationKey)
	if err != nil {
		return nil, fmt.Errorf("RUCKUS_ATTESTATION_KEY: %w", err)
	}
	switch {
	case len(seed) > 0:
	case create:
		seed, err = st.ServerSecret(ctx, attestationSecret, func() []byte {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			return b
		})
	default:
		seed, err = st.StoredServerSecret(ctx, attestationSecret)
		if errors.Is(err, store.ErrNotFound) {
			return nil, errors.New("this database has no attestation key (the server makes one when it first starts) and RUCKUS_ATTESTATION_KEY is not set")
		}
	}
	if err != nil {
		return nil, err
	}
	signer, err := attest.NewSigner(seed)
	if err != nil {
		return nil, fmt.Errorf("RUCKUS_ATTESTATION_KEY: %w", err)
	}
	return &attest.Service{Store: st, Signer: signer}, nil
}

// startJobs starts the server's River client: it works the server queue
// (session cleanup, the reaper, scoring) and gives the benchmark service, which
// queues runs and as the reaper reassigns the runs of agents that stopped
// heartbeating, its client.
// jobDeps are what the server's workers need besides the store: the
// attester that signs ended runs (nil: none) and the guard of webhook
// deliveries.
type jobDeps struct {
	attester *attest.Service
	guard    notify.Guard
}

// webhookGuard is RUCKUS_WEBHOOK_ALLOWED_NETWORKS as a guard.
func webhookGuard(cfg config.Config) (notify.Guard, error) {
	allowed, err := handlers.ParseTrustedProxies(cfg.WebhookAllowedNetworks)
	if err != nil {
		return notify.Guard{}, fmt.Errorf("RUCKUS_WEBHOOK_ALLOWED_NETWORKS: %w", err)
	}
	return notify.Guard{Allowed: allowed}, nil
}

func startJobs(ctx context.Context, pool *pgxpool.Pool, st *store.Store, cfg config.Config, deps jobDeps, logger *slog.Logger) (*bench.Service, *river.Client[pgx.Tx], error) {
	benchmarks := &bench.Service{Store: st, StaleAfter: cfg.AgentStaleAfter}
	var err error
	if benchmarks.SimAccuracy, err = bench.ParseSimAccuracy(os.Getenv(simAccuracyEnv)); err != nil {
		return nil, nil, err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.SessionCleanupWorker{Store: st})
	river.AddWorker(workers, &jobs.ServerRunWorker{})
	river.AddWorker(workers, &jobs.ReaperWorker{Reaper: benchmarks, Searches: benchmarks})
	river.AddWorker(workers, &jobs.ConcludeGivenUpWorker{GivenUp: benchmarks})
	// Scoring queues code execution for the sandbox workers (ruckus
	// sandbox); the server registers the kind but never works it.
	execQueue := &sandbox.Queue{Store: st}
	scoring := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: st, Exec: execQueue, Judge: benchmarks},
		Regressions: &regress.Checker{Store: st}, Stats: conclude.Keeper{Store: st}}
	if deps.attester != nil {
		scoring.Attester = deps.attester
	}
	notifier := &notify.Notifier{Store: st}
	scoring.Notifier = notifier
	benchmarks.Notifier = notifier
	river.AddWorker(workers, scoring)
	// A run whose quality came from the sandbox is concluded here when
	// its execution is done (docs/verdict.md#when-a-verdict-is-final).
	river.AddWorker(workers, &jobs.ConcludeRunWorker{Regressions: scoring.Regressions, Stats: scoring.Stats, Notifier: notifier})
	river.AddWorker(workers, &jobs.DeliverWebhookWorker{Deliverer: notify.NewDeliverer(st, deps.guard, 10*time.Second, version)})
	river.AddWorker(workers, &jobs.ServerExecuteRunWorker{})
	rc, err := river.NewClient(riverpgxv5.New(pool), serverRiverConfig(cfg, workers, logger))
	if err != nil {
		return nil, nil, fmt.Errorf("river client: %w", err)
	}
	benchmarks.River = rc
	execQueue.River = rc
	notifier.River = rc
	if err := rc.Start(ctx); err != nil {
		return nil, nil, fmt.Errorf("start river: %w", err)
	}
	return benchmarks, rc, nil
}

// serverRiverConfig is the server's River configuration: its queues (its
// own work, and the reaper's apart from it), how long finished jobs are
// kept, and the periodic reaper and session cleanup.
func serverRiverConfig(cfg config.Config, workers *river.Workers, logger *slog.Logger) *river.Config {
	return &river.Config{
		Logger: riverlog.New(logger), // its periodic job counts at debug level
		Queues: map[string]river.QueueConfig{jobs.ServerQueue: {MaxWorkers: 2}, jobs.ReaperQueue: {MaxWorkers: 1}, jobs.WebhookQueue: {MaxWorkers: 4}},
		// Finished jobs are kept a while for the job UI and then removed by
		// River's own cleaner; failures longer, to be looked into. (Results
		// live in the app's tables, not in River's.)
		CompletedJobRetentionPeriod: 24 * time.Hour,
		CancelledJobRetentionPeriod: 7 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 30 * 24 * time.Hour,
		Workers:                     workers,
		// River's control messages (cancel, pause, resume) and its
		// leadership and insert signals travel by NOTIFY, which every
		// role may send on any channel, agents included: a forged one
		// paused the server's queues or cancelled any agent's run. The
		// server's client acts on none of them. It polls for jobs (every
		// FetchPollInterval), for its queues' settings and for its jobs'
		// cancellation, which are rows agents may not write (migration
		// 0023); a cancel reaches an agent through the run's own row.
		PollOnly:          true,
		FetchPollInterval: 250 * time.Millisecond,
		// A run is worked for at most jobs.MaxRunTime; River's rescuer must
		// not take a live run from its agent before that. Dead agents' runs
		// are reassigned by the reaper long before.
		RescueStuckJobsAfter: jobs.MaxRunTime + time.Hour,
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(jobs.ReaperInterval(cfg.AgentStaleAfter)),
				func() (river.JobArgs, *river.InsertOpts) { return jobs.ReaperArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(jobs.GivenUpInterval),
				func() (river.JobArgs, *river.InsertOpts) { return jobs.ConcludeGivenUpArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return jobs.SessionCleanupArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
		},
	}
}

// startJobsUI starts River's job UI, served under /admin/jobs.
func startJobsUI(ctx context.Context, rc *river.Client[pgx.Tx], logger *slog.Logger) (*riverui.Handler, error) {
	ui, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(rc, nil),
		Logger:    logger,
		Prefix:    "/admin/jobs",
	})
	if err != nil {
		return nil, fmt.Errorf("river UI: %w", err)
	}
	if err := ui.Start(ctx); err != nil {
		return nil, fmt.Errorf("start river UI: %w", err)
	}
	return ui, nil
}

// readiness is /readyz's check: the database answers and its schema is
// this binary's.
func readiness(st *store.Store, mig *migrations.Migrator) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := st.Ping(ctx); err != nil {
			return &handlers.NotReady{Reason: "database unreachable", Err: err}
		}
		app, rv, err := mig.Pending(ctx)
		if err != nil {
			return &handlers.NotReady{Reason: "cannot read the schema's version", Err: err}
		}
		if app+rv > 0 {
			return &handlers.NotReady{Reason: fmt.Sprintf("%d Ruckus and %d River migrations pending", app, rv)}
		}
		return nil
	}
}

// listenUntilDone serves HTTP on RUCKUS_ADDR until ctx ends or the server
// fails, then shuts the server and the job client down within
// RUCKUS_SHUTDOWN_TIMEOUT.
func listenUntilDone(ctx context.Context, app *fiber.App, rc *river.Client[pgx.Tx], cfg config.Config, logger *slog.Logger, ready chan<- string) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("RUCKUS_ADDR: cannot listen on %s: %w", cfg.Addr, err)
	}
	logger.Info("ruckus listening", "addr", ln.Addr().String(), "version", version)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()

	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	herr := app.ShutdownWithContext(sctx)
	rerr := rc.Stop(sctx)
	logger.Info("stopped")
	return errors.Join(herr, rerr)
}

func datasetLimits(cfg config.Config) dataset.Limits {
	return dataset.Limits{MaxFileBytes: cfg.DatasetMaxBytes, MaxLineBytes: cfg.DatasetMaxLine, MaxItems: cfg.DatasetMaxItems}
}

// bootstrapAdmin creates the first administrator when there is no active
// one: from RUCKUS_ADMIN_EMAIL/RUCKUS_ADMIN_PASSWORD, else with a
// generated password printed once.
func bootstrapAdmin(ctx context.Context, st *store.Store, pw *auth.Passwords, cfg config.Config, out io.Writer) error {
	return st.InTx(ctx, func(q *store.Queries) error {
		// One bootstrapper at a time when several servers start together.
		if err := q.LockAccounts(ctx); err != nil {
			return err
		}
		n, err := q.CountActiveAdmins(ctx)
		if err != nil || n > 0 {
			return err
		}
		email := cfg.AdminEmail
		if email == "" {
			email = "admin@ruckus.local"
		}
		password, generated := cfg.AdminPassword, false
		if password == "" {
			password, generated = auth.GeneratePassword(), true
		}
		hash, err := pw.Hash(password)
		if err != nil {
			return err
		}
		_, err = q.CreateUser(ctx, store.NewUser{Email: email, Name: "Administrator", PasswordHash: hash, Role: store.RoleAdmin})
		if errors.Is(err, store.ErrEmailTaken) {
			return fmt.Errorf("there is no active administrator and RUCKUS_ADMIN_EMAIL (%s) belongs to an existing account: choose another email, or run `ruckus user create --admin`", email)
		}
		if err != nil {
			return err
		}
		if generated {
			fmt.Fprintf(out, "\n  Created the first administrator.\n    email:    %s\n    password: %s\n  This password is shown once; change it under Settings after signing in.\n\n", email, password)
		} else {
			fmt.Fprintf(out, "Created the first administrator %s (password from RUCKUS_ADMIN_PASSWORD).\n", email)
		}
		return nil
	})
}

// readProviders reads the provider table file (RUCKUS_PROVIDERS_FILE); no
// file is the built-in table.
func readProviders(path string) (jobs.Providers, error) {
	if path == "" {
		return jobs.DefaultProviders(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("RUCKUS_PROVIDERS_FILE: %w", err)
	}
	defer f.Close()
	p, err := jobs.ReadProviders(f)
	if err != nil {
		return nil, fmt.Errorf("RUCKUS_PROVIDERS_FILE %s: %w", path, err)
	}
	return p, nil
}
