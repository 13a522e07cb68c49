-- The model registry: what can be benchmarked, with the facts needed to
-- check that a model fits a GPU.
CREATE TABLE models (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name           text        NOT NULL,
    display_name   text        NOT NULL DEFAULT '',
    family         text        NOT NULL DEFAULT '',
    params_b       double precision NOT NULL,
    quantization   text        NOT NULL DEFAULT 'bf16',
    context_length integer     NOT NULL DEFAULT 4096,
    license        text        NOT NULL DEFAULT '',
    -- Given memory need in GB; NULL means "estimate it" (see app/advise).
    memory_gb      double precision,
    base_model_id  bigint      REFERENCES models (id),
    adapter        boolean     NOT NULL DEFAULT false,
    retired_at     timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT models_params_check CHECK (params_b > 0),
    CONSTRAINT models_context_check CHECK (context_length > 0),
    CONSTRAINT models_memory_check CHECK (memory_gb IS NULL OR memory_gb > 0),
    CONSTRAINT models_base_check CHECK (base_model_id IS NULL OR base_model_id <> id)
);
CREATE UNIQUE INDEX models_name_key ON models (name);
