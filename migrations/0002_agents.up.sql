-- Agents: one row per agentd process name. State "stale" is derived from the
-- heartbeat age when read, so a crashed agent needs no writer to look stale.
CREATE TABLE agents (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name              text        NOT NULL,
    host              text        NOT NULL DEFAULT '',
    version           text        NOT NULL DEFAULT '',
    protocol_version  integer     NOT NULL,
    runtimes          text[]      NOT NULL DEFAULT '{}',
    capabilities      jsonb       NOT NULL DEFAULT '{}',
    state             text        NOT NULL DEFAULT 'online',
    drained           boolean     NOT NULL DEFAULT false,
    deactivated_at    timestamptz,
    started_at        timestamptz NOT NULL DEFAULT now(),
    last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
    registered_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT agents_state_check CHECK (state IN ('online', 'offline')),
    CONSTRAINT agents_name_check CHECK (name <> '')
);
CREATE UNIQUE INDEX agents_name_key ON agents (name);
