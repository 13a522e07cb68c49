// Package handlers is the web layer: one route table, the middleware, and a
// handler per page, fragment and API resource.
package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/assets"
)

// Deps is everything the web layer needs from the rest of the program.
type Deps struct {
	Store     Store
	Logger    *slog.Logger
	Version   string
	Assets    *assets.Manifest
	Passwords *auth.Passwords
	// SessionKey signs the session, CSRF and flash cookies (32+ bytes).
	SessionKey []byte
	SessionTTL time.Duration
	// SignInAttempts failed sign-ins per SignInWindow per client address
	// are allowed; more get 429 until the window passes.
	SignInAttempts  int
	SignInWindow    time.Duration
	MaxRequestBytes int64
	// Ready reports whether the database answers and its schema is current.
	Ready func(ctx context.Context) error
	// Uploader stores uploaded datasets within DatasetLimits.
	Uploader      Uploader
	DatasetLimits dataset.Limits
	// Benchmarks plans and creates benchmarks.
	Benchmarks Benchmarks
	// JobsUI is River's web UI (riverui), mounted at /admin/jobs for
	// administrators; nil leaves it out.
	JobsUI http.Handler
	// AgentStaleAfter is how old a heartbeat may be before the agent shows
	// as stale.
	AgentStaleAfter time.Duration
	// GridCO2 is grams CO₂e per kWh, for runs' estimated emissions.
	GridCO2 float64
	// LiveFragmentTTL is how long a benchmark's rendered live fragments
	// are shared by its viewers (see liveFragments); 0 turns sharing off.
	LiveFragmentTTL time.Duration
}

// Store is the database as the handlers use it; *store.Store satisfies it.
type Store interface {
	userStore
	datasetStore
	modelStore
	fleetStore
	benchmarkStore
	sessionStore
	tokenStore
	agentStore
	resultStore
	compareStore
}

type server struct {
	Deps
	sessions *auth.SessionStore
	flashes  *sessions.CookieStore
	csrf     *securecookie.SecureCookie
	validate *validator.Validate
	live     *liveFragments
}

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	s := &server{
		Deps:     d,
		sessions: auth.NewSessionStore(d.Store, d.SessionKey, d.SessionTTL),
		flashes:  sessions.NewCookieStore(d.SessionKey),
		csrf:     securecookie.New(d.SessionKey, nil),
		validate: validator.New(validator.WithRequiredStructEnabled()),
		live:     newLiveFragments(d.LiveFragmentTTL),
	}
	s.validate.RegisterTagNameFunc(func(f reflect.StructField) string { return f.Tag.Get("form") })
	s.flashes.Options = &sessions.Options{Path: "/", MaxAge: 300, HttpOnly: true, SameSite: http.SameSiteLaxMode}

	app := fiber.New(fiber.Config{
		AppName: "ruckus",
		// Bodies stream, so a dataset upload never sits in memory whole;
		// limitBody keeps every other route to MaxRequestBytes.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    int(d.MaxRequestBytes),
		ErrorHandler:                 s.handleError,
		DisableStartupMessage:        true,
		// fasthttp's read deadline covers the whole body, and dataset
		// uploads stream up to a gigabyte: allow for a slow link.
		ReadTimeout:   30 * time.Minute,
		CaseSensitive: true,
		StrictRouting: true,
		WriteTimeout:  60 * time.Second,
		IdleTimeout:   120 * time.Second,
	})
	app.Use(recover.New(recover.Config{EnableStackTrace: true}))
	app.Use(s.logRequests, securityHeaders, s.limitBody)

	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Get(assets.Prefix+"*", s.serveAsset)

	api := app.Group("/api/v1", s.requireToken)
	api.Get("/me", s.apiMe)
	api.Get("/users", requireAPIAdmin, s.apiListUsers)
	api.Post("/datasets", s.apiUploadDataset)
	api.Get("/datasets", s.apiListDatasets)
	api.Get("/datasets/:id", s.apiGetDataset)
	api.Get("/datasets/:id/items", s.apiDatasetItems)
	api.Post("/datasets/:id<int>/imports", s.apiImportResults)
	api.Delete("/datasets/:id", s.apiDeleteDataset)
	api.Post("/benchmarks", s.apiCreateBenchmark)
	api.Get("/benchmarks", s.apiListBenchmarks)
	api.Get("/benchmarks/:id<int>", s.apiGetBenchmark)
	api.Get("/benchmarks/:id<int>/export", s.exportBenchmark(false))
	api.Get("/benchmarks/:id<int>/summary", s.exportBenchmark(true))
	api.Get("/benchmarks/:id<int>/recommendation", s.apiRecommendation)
	api.Get("/runs/:id<int>", s.apiGetRun)
	api.Get("/runs/:id<int>/results", s.exportRun)
	api.Post("/benchmarks/:id<int>/cancel", s.apiRunControl("cancel-benchmark"))
	api.Post("/runs/:id<int>/cancel", s.apiRunControl("cancel"))
	api.Post("/runs/:id<int>/retry", s.apiRunControl("retry"))
	api.Get("/models", s.apiListModels)
	api.Post("/models", requireAPIAdmin, s.apiCreateModel)
	api.Put("/models/:id<int>", requireAPIAdmin, s.apiUpdateModel)
	api.Post("/models/:id<int>/retire", requireAPIAdmin, s.apiSetModelRetired(true))
	api.Post("/models/:id<int>/restore", requireAPIAdmin, s.apiSetModelRetired(false))
	api.Get("/agents", s.apiListAgents)
	for _, action := range []string{"drain", "undrain", "deactivate", "reactivate"} {
		api.Post("/agents/:id<int>/"+action, requireAPIAdmin, s.apiAgentAction(action))
	}
	api.Get("/hardware", s.apiListHardware)
	api.Put("/hardware/:slug/price", requireAPIAdmin, s.apiSetHardwarePrice)
	api.Use(apiNotFound)

	web := app.Group("", s.loadSession, s.checkCSRF)
	web.Get("/signin", s.showSignInPage)
	web.Post("/signin", limiter.New(limiter.Config{
		Max:                    d.SignInAttempts,
		Expiration:             d.SignInWindow,
		SkipSuccessfulRequests: true,
		LimitReached:           s.signInLimitReached,
	}), s.signIn)
	web.Post("/signout", s.signOut)

	web.Get("/", requireUser, s.showHomePage)
	web.Get("/fragments/agents", requireUser, s.agentsFragment)
	web.Get("/datasets", requireUser, s.showDatasetsPage)
	web.Post("/datasets", requireUser, s.uploadDataset)
	web.Get("/datasets/:id", requireUser, s.showDatasetPage)
	web.Post("/datasets/:id<int>/imports", requireUser, s.importResults)
	web.Post("/datasets/:id/delete", requireUser, s.deleteDataset)
	web.Get("/benchmarks", requireUser, s.showBenchmarksPage)
	web.Get("/benchmarks/new", requireUser, s.showNewBenchmarkPage)
	web.Get("/benchmarks/active", requireUser, s.showActiveRunsFragment)
	web.Post("/benchmarks/new", requireUser, s.createBenchmark)
	web.Post("/benchmarks/manifest", requireUser, s.createBenchmarkFromManifest)
	web.Get("/benchmarks/:id<int>", requireUser, s.showBenchmarkPage)
	web.Get("/benchmarks/:id<int>/runs", requireUser, s.showRunsFragment)
	web.Get("/benchmarks/:id<int>/runs/:run<int>/card", requireUser, s.showRunCard)
	web.Get("/benchmarks/:id<int>/export", requireUser, s.exportBenchmark(false))
	web.Get("/benchmarks/:id<int>/summary", requireUser, s.exportBenchmark(true))
	web.Get("/benchmarks/:id<int>/recommend", requireUser, s.showRecommendationPage)
	web.Get("/runs/:id<int>/results", requireUser, s.exportRun)
	web.Get("/runs/:id<int>", requireUser, s.showResultsPage)
	web.Post("/runs/:id<int>/score", requireUser, s.rescoreRun)
	web.Get("/compare", requireUser, s.showComparePage)
	web.Get("/runs/:id<int>/items/:idx<int>", requireUser, s.showResultItemPage)
	web.Post("/benchmarks/:id<int>/cancel", requireUser, s.runControl("cancel-benchmark"))
	web.Post("/benchmarks/:id<int>/runs/:run<int>/cancel", requireUser, s.runControl("cancel"))
	web.Post("/benchmarks/:id<int>/runs/:run<int>/retry", requireUser, s.runControl("retry"))
	web.Get("/settings", requireUser, s.showSettingsPage)
	web.Post("/settings/password", requireUser, s.changePassword)
	web.Post("/settings/tokens", requireUser, s.createToken)
	web.Post("/settings/tokens/:id<int>/revoke", requireUser, s.revokeToken)

	admin := web.Group("/admin", requireUser, requireAdmin)
	admin.Get("/users", s.showUsersPage)
	admin.Post("/users", s.createUser)
	admin.Post("/users/:id<int>/disable", s.setUserDisabled(true))
	admin.Post("/users/:id<int>/enable", s.setUserDisabled(false))
	admin.Post("/users/:id<int>/reset-password", s.resetPassword)
	if d.JobsUI != nil {
		ui := adaptor.HTTPHandler(d.JobsUI)
		// River's UI is a single-page application with its own inline
		// bootstrap script and fonts.
		relaxCSP := func(c *fiber.Ctx) error {
			c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
			return c.Next()
		}
		admin.All("/jobs", relaxCSP, ui)
		admin.All("/jobs/*", relaxCSP, ui)
	}
	admin.Get("/agents", s.showAgentsPage)
	admin.Post("/agents/:id<int>/drain", s.agentAction(func(ctx context.Context, id int64) error { return d.Store.SetAgentDrained(ctx, id, true) }))
	admin.Post("/agents/:id<int>/undrain", s.agentAction(func(ctx context.Context, id int64) error { return d.Store.SetAgentDrained(ctx, id, false) }))
	admin.Post("/agents/:id<int>/deactivate", s.agentAction(func(ctx context.Context, id int64) error { return d.Store.SetAgentDeactivated(ctx, id, true) }))
	admin.Post("/agents/:id<int>/reactivate", s.agentAction(func(ctx context.Context, id int64) error { return d.Store.SetAgentDeactivated(ctx, id, false) }))
	admin.Get("/hardware", s.showHardwarePage)
	admin.Post("/hardware/:slug/price", s.setHardwarePrice)
	admin.Get("/models", s.showModelsPage)
	admin.Post("/models", s.createModel)
	admin.Get("/models/:id<int>", s.showModelEditPage)
	admin.Post("/models/:id<int>", s.updateModel)
	admin.Post("/models/:id<int>/retire", s.setModelRetired(true))
	admin.Post("/models/:id<int>/restore", s.setModelRetired(false))

	// Whatever matched nothing above: a 404 page in the layout.
	app.Use(s.notFound)
	return app
}
