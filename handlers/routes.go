// Package handlers is the web layer: one route table, the middleware, and a
// handler per page, fragment and API resource.
package handlers

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/fleet"
	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/assets"
	"github.com/ruckus/ruckus/jobs"
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
	// Fleets plans and creates fleets; nil means a fleet service over
	// Benchmarks (when that is a *bench.Service).
	Fleets Fleets
	// Providers is the provider table of fleets' remote targets (nil:
	// jobs.DefaultProviders).
	Providers jobs.Providers
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
	// ExportsPerUser and ExportsTotal bound the streamed exports running at
	// once (each holds a database connection: keep ExportsTotal below the
	// pool's size); ExportStallTimeout cuts a client that takes nothing for
	// that long. Zero means the default (2, 4, 30 s).
	ExportsPerUser     int
	ExportsTotal       int
	ExportStallTimeout time.Duration
	// RequestTimeout bounds the work of one request (its context's
	// deadline, which every query inherits); uploads get UploadTimeout.
	// Zero means the defaults (60 s, 30 min). Streamed exports run after
	// the handler on deadlines of their own.
	RequestTimeout time.Duration
	UploadTimeout  time.Duration
	// TrustedProxies are the reverse proxies (addresses and CIDR ranges)
	// whose X-Forwarded-For names the client; from any other peer the
	// peer's own address is the client's.
	TrustedProxies []netip.Prefix
	// ObserveRequest, when set, records each answered request's duration
	// under its route's pattern (the Prometheus metrics).
	ObserveRequest func(route, method string, code int, d time.Duration)
	// APIRatePerToken and APIRatePerUser bound the API requests per
	// APIRateWindow of one token, and of all of one user's tokens together;
	// 0 turns that limit off. Zero window: one minute.
	APIRatePerToken int
	APIRatePerUser  int
	APIRateWindow   time.Duration
	// Attestations verifies runs' signed result digests; nil: none.
	Attestations Attestations
	// WebhookGuard checks webhooks' URLs (the networks they may reach).
	WebhookGuard notify.Guard
}

// Store is the database as the handlers use it; *store.Store satisfies it.
type Store interface {
	userStore
	datasetStore
	datasetGenerateStore
	modelStore
	adminAgentStore
	benchmarkStore
	benchmarkRunnerStore
	sessionStore
	tokenStore
	agentListStore
	resultStore
	compareStore
	capacityStore
	variantsStore
	conclude.WeighSource
	conclude.PairSource
	homeStore
	judgeStore
	fleetStore
	providerPriceStore
	historyStore
	webhookStore
	lengthSweepStore
}

type server struct {
	Deps
	sessions *auth.SessionStore
	flashes  *sessions.CookieStore
	csrf     *securecookie.SecureCookie
	// validate is the one validator of forms and API bodies.
	validate *valid.Validator
	live     *liveFragments
	exports  *exportGate
	// rates counts API requests per token and per user.
	rates *rateLimiter
	// exportStall is ExportStallTimeout or its default.
	exportStall time.Duration
	// routes is the route table as declared, with each route's access.
	routes []Route
	// openAPI is the API's description as JSON (openapi.yaml).
	openAPI []byte
	// mutableStrings turns Fiber's Immutable setting off: only the
	// benchmark that measures its cost sets it.
	mutableStrings bool
}

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	app, _ := NewWithRoutes(d)
	return app
}

// NewWithRoutes builds the Fiber app and returns its route table, each
// route with who may use it.
func NewWithRoutes(d Deps) (*fiber.App, []Route) {
	s := newServer(d)
	return s.build(), s.routes
}

// build is the Fiber app with every route over s.
func (s *server) build() *fiber.App {
	app := s.newApp()

	// The route table: every route with who may use it (Access). The
	// declaration adds the sign-in and administrator checks; Owner routes
	// find the resource only among those the viewer may read (else 404).
	// Each area below is one flat list, in the order Fiber matches them.
	var routes []Route
	root := table{routes: &routes, router: app}
	s.probeRoutes(root)
	api := root.group("/api/v1", s.requireToken, s.limitAPI)
	api.api = true
	s.apiRoutes(api)
	web := root.group("", s.loadSession, s.checkCSRF)
	s.webRoutes(web)
	s.adminRoutes(web.group("/admin"))
	s.routes = routes

	// Whatever matched nothing above: a 404 page in the layout.
	app.Use(s.notFound)
	return app
}

// newServer is the handlers' state over d.
func newServer(d Deps) *server {
	if p, ok := d.Benchmarks.(*bench.Service); ok && d.Fleets == nil {
		d.Fleets = &fleet.Service{Bench: p, Providers: d.Providers}
	}
	s := &server{
		Deps:     d,
		sessions: auth.NewSessionStore(d.Store, d.SessionKey, d.SessionTTL),
		flashes:  sessions.NewCookieStore(d.SessionKey),
		csrf:     securecookie.New(d.SessionKey, nil),
		validate: newValidator(),
		live:     newLiveFragments(d.LiveFragmentTTL),
		exports:  newExportGate(d.ExportsPerUser, d.ExportsTotal),
		rates:    newRateLimiter(d.APIRateWindow),
	}
	s.exportStall = cmp.Or(d.ExportStallTimeout, defaultExportStallTimeout)
	spec, err := OpenAPIDocument()
	if err != nil {
		panic(err) // embedded: the tests read it
	}
	s.openAPI = spec
	s.flashes.Options = &sessions.Options{Path: "/", MaxAge: 300, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	return s
}

// newApp is the Fiber app with the middleware every request passes.
func (s *server) newApp() *fiber.App {
	app := fiber.New(fiber.Config{
		AppName: "ruckus",
		// Bodies stream, so a dataset upload never sits in memory whole;
		// limitBody keeps every other route to MaxRequestBytes.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    int(s.MaxRequestBytes),
		ErrorHandler:                 s.handleError,
		DisableStartupMessage:        true,
		// fasthttp's read deadline covers the whole body, and dataset
		// uploads stream up to a gigabyte: allow for a slow link.
		ReadTimeout: 30 * time.Minute,
		// Every string Fiber hands out (method, path, params, query,
		// headers, form values, cookies, the body) is a copy, not a view
		// of a buffer fasthttp reuses for the next request: a value kept
		// past its request (a metric's label, a cache or rate-limit key, an
		// error, a log field) cannot change under its holder. Its cost is
		// measured in docs/development.md#request-strings.
		Immutable:     !s.mutableStrings,
		CaseSensitive: true,
		StrictRouting: true,
		WriteTimeout:  60 * time.Second,
		IdleTimeout:   120 * time.Second,
	})
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		s.Logger.Error("panic", "method", c.Method(), "path", c.Path(), "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
	}}))
	app.Use(s.logRequests, securityHeaders, s.limitBody)
	return app
}

// Probes and documents: open to anyone.
func (s *server) probeRoutes(root table) {
	root.get("/healthz", Anyone, s.healthz)
	root.get("/readyz", Anyone, s.readyz)
	root.get(assets.Prefix+"*", Anyone, s.serveAsset)
	// The API's description and its reference page, before the API group
	// so that reading them needs no token.
	root.get(OpenAPIPath, Anyone, s.serveOpenAPI)
	root.get(OpenAPIYAMLPath, Anyone, s.serveOpenAPIYAML)
	root.get("/api/docs", Anyone, s.showAPIDocs)
}

// The JSON API under /api/v1, by bearer token.
func (s *server) apiRoutes(api table) {
	api.get("/me", SignedIn, s.apiMe)
	api.get("/users", Admin, s.apiListUsers)
	api.post("/datasets", SignedIn, s.apiUploadDataset)
	api.post("/datasets/generate", SignedIn, s.apiGenerateDataset)
	api.get("/datasets", SignedIn, s.apiListDatasets)
	api.get("/datasets/:id", Owner, s.apiGetDataset)
	api.get("/datasets/:id/items", Owner, s.apiDatasetItems)
	api.post("/datasets/:id<int>/imports", Owner, s.apiImportResults)
	api.delete("/datasets/:id", Owner, s.apiDeleteDataset)
	api.get("/datasets/:id<int>/leaderboard", Owner, s.apiLeaderboard)
	api.get("/datasets/:id<int>/history", Owner, s.apiHistory)
	api.get("/datasets/:id<int>/recommendation", Owner, s.apiDatasetRecommendation)
	api.post("/benchmarks", SignedIn, s.apiCreateBenchmark)
	api.get("/benchmarks", SignedIn, s.apiListBenchmarks)
	api.get("/benchmarks/:id<int>", Owner, s.apiGetBenchmark)
	api.get("/benchmarks/:id<int>/results", Owner, s.apiBenchmarkResults)
	api.patch("/benchmarks/:id<int>", Owner, s.apiUpdateBenchmark) // readers of a shared benchmark get 403
	api.delete("/benchmarks/:id<int>", Owner, s.apiDeleteBenchmark)
	api.get("/benchmarks/:id<int>/export", Owner, s.exportBenchmark(false))
	api.get("/benchmarks/:id<int>/summary", Owner, s.exportBenchmark(true))
	api.get("/benchmarks/:id<int>/recommendation", Owner, s.apiRecommendation)
	api.get("/benchmarks/:id<int>/verdict", Owner, s.apiBenchmarkVerdict)
	// The best configuration (docs/verdict.md#the-best-configuration).
	api.get("/benchmarks/:id<int>/configurations", Owner, s.apiConfigurations)
	api.get("/compare", Owner, s.apiCompare) // every run must be the viewer's (else 404)
	api.get("/benchmarks/:id<int>/report.html", Owner, s.benchmarkReport)
	api.get("/runs/:id<int>", Owner, s.apiGetRun)
	api.get("/runs/:id<int>/steps", Owner, s.apiRunSteps)
	api.get("/runs/:id<int>/results", Owner, s.exportRun)
	api.get("/runs/:id<int>/attestation", Owner, s.apiRunAttestation)
	api.post("/benchmarks/:id<int>/cancel", Owner, s.apiRunAction("cancel-benchmark"))
	api.post("/runs/:id<int>/cancel", Owner, s.apiRunAction("cancel"))
	api.post("/runs/:id<int>/retry", Owner, s.apiRunAction("retry"))
	api.post("/runs/:id<int>/judge", Owner, s.apiStartJudging) // graded alone, or against another run ("against")
	api.post("/runs/:id<int>/score", Owner, s.apiRescoreRun)   // readers of a shared benchmark get 403
	api.get("/models", SignedIn, s.apiListModels)
	api.post("/models", Admin, s.apiCreateModel)
	api.put("/models/:id<int>", Admin, s.apiUpdateModel)
	api.post("/models/:id<int>/retire", Admin, s.apiSetModelRetired(true))
	api.post("/models/:id<int>/restore", Admin, s.apiSetModelRetired(false))
	api.get("/agents", SignedIn, s.apiListAgents)
	api.post("/agents/:id<int>/drain", Admin, s.apiAgentAction("drain"))
	api.post("/agents/:id<int>/undrain", Admin, s.apiAgentAction("undrain"))
	api.post("/agents/:id<int>/deactivate", Admin, s.apiAgentAction("deactivate"))
	api.post("/agents/:id<int>/reactivate", Admin, s.apiAgentAction("reactivate"))
	api.get("/hardware", SignedIn, s.apiListHardware)
	api.post("/capacity", SignedIn, s.apiCapacity)
	api.put("/hardware/:slug/price", Admin, s.apiSetHardwarePrice)
	api.post("/fleets", SignedIn, s.apiCreateFleet)
	api.get("/fleets", SignedIn, s.apiListFleets)
	api.get("/fleets/:id<int>", Owner, s.apiGetFleet)
	api.get("/fleets/:id<int>/report", Owner, s.apiFleetReport)
	api.get("/fleets/:id<int>/report.html", Owner, s.apiFleetDashboard)
	api.post("/webhooks", SignedIn, s.apiCreateWebhook)
	api.get("/webhooks", SignedIn, s.apiListWebhooks) // the viewer's webhooks and their latest deliveries
	api.delete("/webhooks/:id<int>", Self, s.apiDeleteWebhook)
	api.router.Use(apiNotFound)
}

// The web pages and their fragments, by session cookie.
func (s *server) webRoutes(web table) {
	web.get("/signin", Anyone, s.showSignInPage)
	web.post("/signin", Anyone, s.signInLimiter(), s.signIn)
	web.post("/signout", Anyone, s.signOut)

	docsPages := newDocsPages() // the documentation, rendered once; for anyone
	web.get("/docs", Anyone, docsPages.showIndex)
	web.get("/docs/images/:file", Anyone, docsPages.serveImage)
	web.get("/docs/:page", Anyone, docsPages.showPage)

	web.get("/", SignedIn, s.showHomePage)
	web.get("/fragments/agents", SignedIn, s.agentsFragment)
	web.get("/fragments/running", SignedIn, s.runningFragment)
	web.post("/first-benchmark", SignedIn, s.launchFirstBenchmark)
	web.get("/datasets", SignedIn, s.showDatasetsPage)
	web.post("/datasets", SignedIn, s.uploadDataset)
	web.post("/datasets/generate", SignedIn, s.generateDataset)
	web.get("/datasets/:id", Owner, s.showDatasetPage)
	web.post("/datasets/:id<int>/imports", Owner, s.importResults)
	web.post("/datasets/:id/delete", Owner, s.deleteDataset)
	web.get("/datasets/:id<int>/leaderboard", Owner, s.showLeaderboardPage)
	web.get("/datasets/:id<int>/history", Owner, s.showHistoryPage)
	web.get("/datasets/:id<int>/recommend", Owner, s.showDatasetRecommendationPage)
	web.get("/datasets/:id<int>/variants", Owner, s.showVariantsPage)
	web.get("/benchmarks", SignedIn, s.showBenchmarksPage)
	web.get("/benchmarks/new", SignedIn, s.showNewBenchmarkPage)
	web.get("/benchmarks/new/target", SignedIn, s.showTargetRowFragment)    // one target row (add, or redraw on a model change)
	web.get("/benchmarks/new/load", SignedIn, s.showLoadPresetFragment)     // the load fields filled by a preset
	web.get("/benchmarks/new/scorer", SignedIn, s.showScorerFieldsFragment) // the scorer picker with the picked scorer's options
	web.get("/benchmarks/active", SignedIn, s.showActiveRunsFragment)
	web.post("/benchmarks/new", SignedIn, s.createBenchmark)
	web.post("/benchmarks/manifest", SignedIn, s.createBenchmarkFromManifest)
	web.get("/benchmarks/:id<int>", Owner, s.showBenchmarkPage)
	web.get("/benchmarks/:id<int>/runs", Owner, s.showRunsFragment)
	web.get("/benchmarks/:id<int>/verdict", Owner, s.showVerdictFragment)
	web.get("/benchmarks/:id<int>/runs/:run<int>/card", Owner, s.showRunCard)
	web.get("/benchmarks/:id<int>/export", Owner, s.exportBenchmark(false))
	web.get("/benchmarks/:id<int>/summary", Owner, s.exportBenchmark(true))
	web.get("/benchmarks/:id<int>/recommend", Owner, s.showRecommendationPage)
	web.get("/benchmarks/:id<int>/configurations", Owner, s.showConfigurationsPage)
	web.post("/benchmarks/:id<int>/rename", Owner, s.changeBenchmark)         // readers of a shared benchmark get 403
	web.post("/benchmarks/:id<int>/visibility", Owner, s.changeBenchmark)     // private or shared
	web.post("/benchmarks/:id<int>/verdict-scorer", Owner, s.changeBenchmark) // the scorer identity the verdict ranks quality by
	web.post("/benchmarks/:id<int>/delete", Owner, s.deleteBenchmark)
	web.get("/benchmarks/:id<int>/report.html", Owner, s.benchmarkReport)
	web.get("/runs/:id<int>/results", Owner, s.exportRun)
	web.get("/runs/:id<int>", Owner, s.showResultsPage)
	web.get("/runs/:id<int>/attestation", Owner, s.showAttestation)
	web.post("/runs/:id<int>/score", Owner, s.rescoreRun)
	web.post("/runs/:id<int>/judge", Owner, s.startJudging)
	web.get("/compare", Owner, s.showComparePage)
	web.post("/compare/judge", Owner, s.startPairJudging) // both runs must be the viewer's (else 404)
	web.get("/capacity", SignedIn, s.showCapacityPage)
	web.get("/fleets", SignedIn, s.showFleetsPage)
	web.post("/fleets", SignedIn, s.submitFleet)
	web.get("/fleets/:id<int>", Owner, s.showFleetPage)
	web.get("/fleets/:id<int>/report", Owner, s.apiFleetReport)
	web.get("/fleets/:id<int>/report.html", Owner, s.apiFleetDashboard)
	web.get("/runs/:id<int>/items/:idx<int>", Owner, s.showResultItemPage)
	web.post("/benchmarks/:id<int>/cancel", Owner, s.runAction("cancel-benchmark"))
	web.post("/benchmarks/:id<int>/runs/:run<int>/cancel", Owner, s.runAction("cancel"))
	web.post("/benchmarks/:id<int>/runs/:run<int>/retry", Owner, s.runAction("retry"))
	web.get("/settings", SignedIn, s.showSettingsPage)
	web.post("/settings/password", SignedIn, s.changePassword)
	web.post("/settings/language", SignedIn, s.setLanguage)
	web.post("/settings/tokens", SignedIn, s.createToken)
	web.post("/settings/tokens/:id<int>/revoke", Self, s.revokeToken)
	web.post("/settings/webhooks", SignedIn, s.createWebhook)
	web.post("/settings/webhooks/:id<int>/delete", Self, s.deleteWebhook)
}

// The administrators' pages under /admin, by session cookie.
func (s *server) adminRoutes(admin table) {
	admin.get("/users", Admin, s.showUsersPage)
	admin.post("/users", Admin, s.createUser)
	admin.post("/users/:id<int>/disable", Admin, s.setUserDisabled(true))
	admin.post("/users/:id<int>/enable", Admin, s.setUserDisabled(false))
	admin.post("/users/:id<int>/reset-password", Admin, s.resetPassword)
	if s.JobsUI != nil {
		ui := adaptor.HTTPHandler(s.JobsUI)
		admin.all("/jobs", Admin, relaxCSPForJobsUI, ui)
		admin.all("/jobs/*", Admin, relaxCSPForJobsUI, ui)
	}
	admin.get("/agents", Admin, s.showAgentsPage)
	admin.post("/agents/:id<int>/drain", Admin, s.agentAction(func(ctx context.Context, id int64) error { return s.Store.SetAgentDrained(ctx, id, true) }))
	admin.post("/agents/:id<int>/undrain", Admin, s.agentAction(func(ctx context.Context, id int64) error { return s.Store.SetAgentDrained(ctx, id, false) }))
	admin.post("/agents/:id<int>/deactivate", Admin, s.agentAction(func(ctx context.Context, id int64) error { return s.Store.SetAgentDeactivated(ctx, id, true) }))
	admin.post("/agents/:id<int>/reactivate", Admin, s.agentAction(func(ctx context.Context, id int64) error { return s.Store.SetAgentDeactivated(ctx, id, false) }))
	// What an agent serves is granted, not declared (migration 0023).
	admin.post("/agents/:id<int>/approve", Admin, s.agentAction(func(ctx context.Context, id int64) error { return s.Store.ApproveAgent(ctx, id) }))
	admin.get("/hardware", Admin, s.showHardwarePage)
	admin.post("/hardware/:slug/price", Admin, s.setHardwarePrice)
	admin.get("/providers", Admin, s.showProvidersPage)
	admin.post("/providers/prices", Admin, s.setProviderPrice)
	admin.post("/providers/prices/delete", Admin, s.deleteProviderPrice)
	admin.get("/models", Admin, s.showModelsPage)
	admin.post("/models", Admin, s.createModel)
	admin.get("/models/:id<int>", Admin, s.showModelEditPage)
	admin.post("/models/:id<int>", Admin, s.updateModel)
	admin.post("/models/:id<int>/retire", Admin, s.setModelRetired(true))
	admin.post("/models/:id<int>/restore", Admin, s.setModelRetired(false))
}

// signInLimiter answers 429 to a client after SignInAttempts failed
// sign-ins within SignInWindow.
func (s *server) signInLimiter() fiber.Handler {
	return limiter.New(limiter.Config{
		// Per client: behind a reverse proxy every peer address is the
		// proxy's, so the client is read from X-Forwarded-For there.
		KeyGenerator:           s.clientIP,
		Max:                    s.SignInAttempts,
		Expiration:             s.SignInWindow,
		SkipSuccessfulRequests: true,
		LimitReached:           s.signInLimitReached,
	})
}

// relaxCSPForJobsUI lets River's UI run: it is a single-page application
// with its own inline bootstrap script and fonts.
func relaxCSPForJobsUI(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	return c.Next()
}
