# Ruckus — `make run` starts everything, `make test` runs every test.
# When DATABASE_URL is unset both start a private PostgreSQL from this
# machine's binaries (see docs/development.md).

SHELL := /bin/bash
.DEFAULT_GOAL := help

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO      ?= go
export CGO_ENABLED ?= 1

.PHONY: help build run run-real test test-go e2e e2e-go docs-images bench bench-go bench-ingest bench-web bench-agent bench-eta bench-soak bench-day bench-day-short bench-sandbox bench-verdict bench-backup check-generated generate sdk lint fmt deps clean assets-swagger-ui

help: ## Show this help
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

build: ## Build bin/ruckus and bin/agentd
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ruckus ./cmd/ruckus
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/agentd ./agentd

assets-swagger-ui: ## Vendor the API docs viewer (npm swagger-ui-dist, pinned in assets/fetch-swagger-ui.sh) into assets/
	./assets/fetch-swagger-ui.sh

deps: ## Install what this machine lacks (PostgreSQL binaries, the sandbox's bubblewrap and python3) where we can
	@./.ci/ensure-postgres
	@./.ci/ensure-pgbouncer
	@./.ci/ensure-sandbox || echo "continuing without the code-execution sandbox: HumanEval/MBPP answers are not executed until it is installed" >&2

run: deps build ## Start PostgreSQL (private, unless DATABASE_URL is set), the server and one agentd (PGBOUNCER=1: the agent through PgBouncer)
	./bin/ruckus dev $(if $(PGBOUNCER),--pgbouncer)

TINY_MODEL := ruckus/tiny-llama

run-real: deps build ## Like run, but agentd launches a real Ollama (built from source) serving a tiny random-weight model
	./e2e/tools/build.sh $(E2E_TOOLS) >/dev/null
	mkdir -p .data/ollama
	PATH="$(E2E_TOOLS):$$PATH" OLLAMA_MODELS=$(CURDIR)/.data/ollama/models OLLAMA_NUM_PARALLEL=4 OLLAMA_NO_CLOUD=1 \
		./bin/ruckus dev --tiny-model $(TINY_MODEL) -- --runtime launch --serves ollama \
		--model-path $(TINY_MODEL)=$(E2E_TOOLS)/tiny.gguf --ready-timeout 2m --stop-grace 10s --log-dir $(CURDIR)/.data/ollama/logs

test: ## Run every test (a throwaway PostgreSQL unless DATABASE_URL is set), then print where the time went
	@rm -f bin/test-times bin/go-test.log bin/e2e.log
	@./.ci/timed deps $(MAKE) --no-print-directory deps
	@./.ci/ensure-compose || echo "continuing without Compose: compose.yaml is checked by its structure only" >&2
	@./.ci/timed check-generated $(MAKE) --no-print-directory check-generated
	@./.ci/timed lint $(MAKE) --no-print-directory lint
	@./.ci/timed build $(MAKE) --no-print-directory build
	@if [ -n "$$DATABASE_URL" ]; then $(MAKE) --no-print-directory test-go; \
	else ./bin/ruckus dev-db exec -- $(MAKE) --no-print-directory test-go; fi
	@./.ci/times

# The Go tests, then the browser tests, each timed and logged to bin/ for
# .ci/times (compiling the test binaries is part of "go test").
test-go:
	@./.ci/timed "go test" bash -o pipefail -c '$(GO) test -count=1 -timeout 30m ./... 2>&1 | tee bin/go-test.log'
	@./.ci/timed "browser tests" bash -o pipefail -c '$(MAKE) --no-print-directory e2e-go 2>&1 | tee bin/e2e.log'

E2E_DRIVER := $(CURDIR)/e2e/.driver
# The real runtime: Ollama built from its Go module and a tiny random-weight
# llama GGUF (e2e/tools; see e2e/README.md).
E2E_TOOLS  := $(CURDIR)/e2e/.tools

e2e: deps build ## Run the browser tests alone (Chromium from Debian, driver from npm)
	@if [ -n "$$DATABASE_URL" ]; then $(MAKE) --no-print-directory e2e-go; \
	else ./bin/ruckus dev-db exec -- $(MAKE) --no-print-directory e2e-go; fi

e2e-go:
	./e2e/install-browser.sh $(E2E_DRIVER)
	./e2e/tools/build.sh $(E2E_TOOLS) >/dev/null
	PLAYWRIGHT_DRIVER_PATH=$(E2E_DRIVER) RUCKUS_E2E_BIN=$(CURDIR)/bin RUCKUS_OLLAMA=$(E2E_TOOLS)/ollama RUCKUS_TINY_GGUF=$(E2E_TOOLS)/tiny.gguf \
		$(GO) test -tags e2e -count=1 -timeout 40m -v ./e2e/

docs-images: build ## Retake the documentation's screenshots (docs/images) with the browser test that takes them
	./e2e/install-browser.sh $(E2E_DRIVER)
	./bin/ruckus dev-db exec -- env RUCKUS_DOCS_IMAGES=$(CURDIR)/docs/images PLAYWRIGHT_DRIVER_PATH=$(E2E_DRIVER) \
		$(GO) test -tags e2e -count=1 -v -run 'TestHomeVerdictAndRanking$$|TestBestConfigurationPage$$|TestSearchThroughTheServer$$' ./e2e/

generate: ## Regenerate templ files
	$(GO) tool templ generate -path views

sdk: ## Regenerate the TypeScript SDK's types (handlers/sdk/typescript) from handlers/openapi.yaml and build it (node, npm; tested by make e2e)
	cd handlers/sdk/typescript && npm ci --no-audit --no-fund && npm run generate && npm run build

check-generated: ## Fail when generated files are stale: templ's, and the TypeScript SDK's types (when npm is installed)
	@$(GO) tool templ generate -path views >/dev/null 2>&1
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && ! git diff --quiet -- views; then \
		echo "generated templ files were stale; run 'make generate' and commit:"; git status --short -- views; exit 1; fi
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ -n "$$(git ls-files --others --exclude-standard -- 'views/*_templ.go')" ]; then \
		echo "generated templ files are not committed:"; git ls-files --others --exclude-standard -- 'views/*_templ.go'; exit 1; fi
	@if ! command -v npm >/dev/null; then \
		echo "npm is not installed: the TypeScript SDK's generated types (handlers/sdk/typescript) were not checked; make e2e installs node and npm"; \
	elif ! out=$$(cd handlers/sdk/typescript && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run --silent check-generated 2>&1); then \
		echo "the TypeScript SDK's generated types (handlers/sdk/typescript/src/schema.ts) are stale or could not be made; run 'make sdk' and commit:"; echo "$$out"; exit 1; fi

lint: ## gofmt, go mod tidy (nothing to change), go vet, staticcheck
	@if ! tidy=$$($(GO) mod tidy -diff 2>&1); then \
		echo "go mod tidy would change go.mod or go.sum; run 'go mod tidy' and commit:"; echo "$$tidy"; exit 1; fi
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); \
		if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/
	$(GO) tool staticcheck ./...
	$(GO) tool staticcheck -tags e2e ./e2e/

bench: bench-go bench-agent bench-eta bench-ingest bench-web bench-verdict bench-sandbox ## Every self-benchmark but the agent soak (make bench-soak), and the Go benchmarks

bench-go: deps build ## The Go benchmarks (parsers, scorers, exports, the agent's hot paths) with allocations
	./bin/ruckus dev-db exec -- $(GO) test -run '^$$' -bench . -benchmem ./...

bench-web: deps build ## Seed 1,000,000 results; time the results, comparison and progress pages and the CSV export against psql; 100 browsers polling the live fragments of 20 running benchmarks
	@command -v wrk >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y --no-install-recommends wrk >/dev/null 2>&1; } || echo "wrk is not installed (apt-get install wrk): measuring the fragment with a Go loop instead"
	./bin/ruckus dev-db exec -- $(GO) run ./cmd/selfbench/web --ruckus bin/ruckus

bench-ingest: deps build ## Upload 1,000,000 generated items over HTTP and compare with psql \copy
	./bin/ruckus dev-db exec -- $(GO) run ./cmd/selfbench/ingest --ruckus bin/ruckus

bench-agent: build ## agentd's load generator against agentd sim on loopback: tokens/s, requests/s, CPU per token and timing error vs a byte-counting baseline
	$(GO) run ./cmd/selfbench/agent --agentd bin/agentd

bench-eta: deps build ## A simulated run with steady latency: the ETA's error at 5, 10, 25 and 50 % progress
	./bin/ruckus dev-db exec -- $(GO) run ./cmd/selfbench/eta --agentd bin/agentd

bench-soak: deps build ## Soak: 100 agentd through PgBouncer, 1,000 small runs, 10 % killed with SIGKILL half-way: lost, duplicated, backends, lease latency, memory
	./bin/ruckus dev-db exec -- $(GO) run ./cmd/selfbench/soak --ruckus bin/ruckus --agentd bin/agentd $(SOAK_ARGS)

bench-day: deps build ## A day in production, compressed: 30 users, 20 agents, scrapes, webhooks, restarts, a backup and one malicious agent for 20 minutes on a private cluster; prints what must hold
	$(GO) run ./cmd/selfbench/day --ruckus bin/ruckus --agentd bin/agentd $(DAY_ARGS)

bench-day-short: deps build ## bench-day in about 5 minutes (2 minutes of work, 10 users, 8 agents, every fault): the CI's check of the whole system
	$(GO) run ./cmd/selfbench/day --short --ruckus bin/ruckus --agentd bin/agentd $(DAY_ARGS)

bench-verdict: deps build ## Benchmarks as users run them (server, agentd sim, the API, drift between runs): how often noise is called significant (≤ 5 %) and a planted difference found (≥ 80 %)
	./bin/ruckus dev-db exec -- $(GO) run ./cmd/selfbench/verdict --ruckus bin/ruckus --agentd bin/agentd $(VERDICT_ARGS)

bench-backup: deps build ## Seed 1,000,000 results; time ruckus backup (pg_dump, custom format) and ruckus restore into an empty database
	./bin/ruckus dev-db exec -- $(GO) run ./cmd/selfbench/backup

bench-sandbox: ## HumanEval's 164 canonical solutions through the code-execution sandbox at concurrency 1 and 2: items/s
	@./.ci/ensure-sandbox
	$(GO) run ./cmd/selfbench/sandbox --humaneval ../shared/datasets/humaneval/HumanEval.jsonl.gz --concurrency 1,2

fmt: ## Format Go and templ sources
	gofmt -w $$(git ls-files '*.go' | grep -v '_templ.go$$')
	$(GO) tool templ fmt views

clean: ## Remove build output (keeps .data, the private cluster)
	rm -rf bin
