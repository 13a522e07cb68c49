# syntax=docker/dockerfile:1

# Ruckus images. One build stage compiles both programs; small runtime
# targets carry them (agentd, pgbouncer, sandbox, server):
#
#   docker build -t ruckus .                        # the server (last stage)
#   docker build --target agentd -t ruckus-agentd .
#
# Pass --build-arg VERSION=… to stamp `ruckus version` / `agentd version`
# (.git is not sent to the builder, so there is no `git describe` here).

# ---- build ------------------------------------------------------------------
# The full golang image has gcc and glibc headers, which cgo needs (go-nvml).
# Official golang images set GOTOOLCHAIN=local, so the 1.26 tag must be at
# least the `go 1.26.8` that go.mod asks for.
FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=1

# Modules first, so editing source does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go mod download

COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/root/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/ruckus ./cmd/ruckus && \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/agentd ./agentd

# ---- runtime base -----------------------------------------------------------
# cgo binaries link glibc dynamically, so the runtime is Debian bookworm (the
# same glibc as the build image), not scratch or alpine.
FROM debian:bookworm-slim AS runtime
RUN apt-get update && \
    apt-get install -y --no-install-recommends ca-certificates tzdata && \
    rm -rf /var/lib/apt/lists/* && \
    groupadd --system --gid 10001 ruckus && \
    useradd --system --uid 10001 --gid ruckus --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin ruckus && \
    mkdir -p /run/ruckus-agent && chown 10001:10001 /run/ruckus-agent && chmod 0700 /run/ruckus-agent

# ---- agentd -----------------------------------------------------------------
# On a real GPU node run it with the NVIDIA container runtime (--gpus all);
# the simulated runtime (--runtime sim) needs nothing extra.
FROM runtime AS agentd
COPY --from=build /out/agentd /usr/local/bin/agentd
USER 10001:10001
ENTRYPOINT ["agentd"]
CMD ["run"]

# ---- pgbouncer --------------------------------------------------------------
# Debian's PgBouncer in transaction pooling mode between agents and
# PostgreSQL, configured and run by `ruckus pgbouncer` (docs/scaling.md).
FROM runtime AS pgbouncer
RUN apt-get update && \
    apt-get install -y --no-install-recommends pgbouncer && \
    rm -rf /var/lib/apt/lists/* && \
    mkdir -p /var/lib/ruckus-pgbouncer && chown 10001:10001 /var/lib/ruckus-pgbouncer
COPY --from=build /out/ruckus /usr/local/bin/ruckus
USER 10001:10001
EXPOSE 6432
ENTRYPOINT ["ruckus", "pgbouncer"]
CMD ["--listen", "0.0.0.0:6432", "--dir", "/var/lib/ruckus-pgbouncer"]

# ---- sandbox ----------------------------------------------------------------
# `ruckus sandbox`, the worker that executes code answers: Debian's
# bubblewrap and python3 (docs/quality.md). It runs as an unprivileged user
# that runs nothing else, so the sandbox's process limit counts only its own
# programs; compose.yaml lifts the container's seccomp/AppArmor profiles so
# bubblewrap can make its namespaces.
FROM runtime AS sandbox
RUN apt-get update && \
    apt-get install -y --no-install-recommends bubblewrap python3 && \
    rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ruckus /usr/local/bin/ruckus
USER 10001:10001
ENTRYPOINT ["ruckus"]
CMD ["sandbox"]

# ---- server (last, so a plain `docker build .` gives this image) -------------
# No HEALTHCHECK: the image has no HTTP client and we do not add curl for it.
# Orchestrators can probe GET /healthz (liveness) and GET /readyz (database).
FROM runtime AS server
COPY --from=build /out/ruckus /usr/local/bin/ruckus
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["ruckus"]
CMD ["serve"]
