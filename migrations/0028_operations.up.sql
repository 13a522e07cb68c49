-- Running Ruckus as a service: signed digests of finished runs' results.

-- When a run ends the server digests its measured result rows in a
-- canonical form (app/attest) and signs the digest with its ed25519 key.
-- row_keys (idx int32, sample int16, big-endian, per row) and row_digests
-- (32 bytes per row) in the same order let a verification name the first
-- row that differs. fence is the run's fence when signed: a run worked
-- again (retried) is signed again, a run merely rescored is not. Agents
-- get no access: no grant is made to ruckus_agent.
CREATE TABLE run_attestations (
    run_id      bigint      PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    fence       bigint      NOT NULL,
    row_count   integer     NOT NULL,
    row_keys    bytea       NOT NULL,
    row_digests bytea       NOT NULL,
    digest      bytea       NOT NULL,
    signature   bytea       NOT NULL,
    public_key  bytea       NOT NULL,
    signed_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT run_attestations_shape CHECK (octet_length(digest) = 32 AND octet_length(signature) = 64
        AND octet_length(public_key) = 32 AND octet_length(row_keys) = 6 * row_count
        AND octet_length(row_digests) = 32 * row_count)
);

-- Webhooks: a user's subscriptions to their benchmarks' events, and every
-- delivery with how it went (River jobs do the sending, with retries).
CREATE TABLE webhooks (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    url        text        NOT NULL,
    -- The HMAC-SHA256 key the bodies are signed with; it must be kept as
    -- given to sign with it.
    secret     text        NOT NULL,
    events     text[]      NOT NULL,
    -- json: Ruckus's event body; slack: {"text": …} for Slack-compatible
    -- incoming webhooks.
    format     text        NOT NULL DEFAULT 'json',
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT webhooks_url_length CHECK (octet_length(url) BETWEEN 1 AND 2048),
    CONSTRAINT webhooks_secret_length CHECK (octet_length(secret) BETWEEN 16 AND 256),
    CONSTRAINT webhooks_events_check CHECK (cardinality(events) BETWEEN 1 AND 3
        AND events <@ ARRAY['benchmark.finished', 'benchmark.failed', 'run.regression']),
    CONSTRAINT webhooks_format_check CHECK (format IN ('json', 'slack'))
);
CREATE INDEX webhooks_user_idx ON webhooks (user_id);

CREATE TABLE webhook_deliveries (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id   bigint      NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event        text        NOT NULL,
    -- What the event is about, so one event is delivered once per webhook
    -- (several runs ending together each see their benchmark finished).
    event_key    text        NOT NULL,
    -- json, not jsonb: the body is sent as it was written.
    payload      json        NOT NULL,
    state        text        NOT NULL DEFAULT 'pending',
    attempts     integer     NOT NULL DEFAULT 0,
    last_status  integer,
    last_error   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT webhook_deliveries_state_check CHECK (state IN ('pending', 'delivered', 'failed')),
    CONSTRAINT webhook_deliveries_error_length CHECK (octet_length(last_error) <= 1024),
    CONSTRAINT webhook_deliveries_once UNIQUE (webhook_id, event_key)
);
CREATE INDEX webhook_deliveries_recent_idx ON webhook_deliveries (webhook_id, id DESC);
