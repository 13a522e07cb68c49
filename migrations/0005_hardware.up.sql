-- Hardware profiles are derived from what agents report; administrators set
-- their price per hour, which cost per token is computed from.
CREATE TABLE hardware_profiles (
    slug             text        PRIMARY KEY,
    gpu_name         text        NOT NULL DEFAULT '',
    gpu_count        integer     NOT NULL DEFAULT 0,
    gpu_memory_bytes bigint      NOT NULL DEFAULT 0,
    cpu_cores        integer     NOT NULL DEFAULT 0,
    price_per_hour   numeric(12, 4),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT hardware_profiles_price_check CHECK (price_per_hour IS NULL OR price_per_hour >= 0)
);

ALTER TABLE agents ADD COLUMN hardware_profile text REFERENCES hardware_profiles (slug);
