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
