-- Fleets as the fleet benchmarking document writes them:
--   - a fleet's scenarios are grouped by repository (the document's
--     repositories[].repo_id), kept with each scenario's benchmark;
--   - remote providers' prices per 1M input and output tokens, set by
--     administrators, and each remote run's provider with the price it was
--     created under, so a fleet's cost covers remote providers as it
--     covers hardware.
-- Agents get nothing here: prices are the administrators', as hardware
-- prices are (migration 0010).
ALTER TABLE benchmarks ADD COLUMN fleet_repository text
    CONSTRAINT benchmarks_fleet_repository_check CHECK (fleet_repository IS NULL OR length(fleet_repository) BETWEEN 1 AND 100);

CREATE TABLE provider_prices (
    provider       text NOT NULL CONSTRAINT provider_prices_provider_check CHECK (provider ~ '^[a-z0-9][a-z0-9.-]{0,62}$'),
    model          text NOT NULL CONSTRAINT provider_prices_model_check CHECK (length(model) BETWEEN 1 AND 200),
    input_per_1m   numeric(14, 6) NOT NULL CONSTRAINT provider_prices_input_check CHECK (input_per_1m >= 0),
    output_per_1m  numeric(14, 6) NOT NULL CONSTRAINT provider_prices_output_check CHECK (output_per_1m >= 0),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, model)
);

-- A remote provider's run: its provider, and the price it was created
-- under (null when none was set).
CREATE TABLE run_providers (
    run_id         bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    provider       text NOT NULL,
    input_per_1m   numeric(14, 6),
    output_per_1m  numeric(14, 6),
    CONSTRAINT run_providers_price_check CHECK ((input_per_1m IS NULL) = (output_per_1m IS NULL))
);
