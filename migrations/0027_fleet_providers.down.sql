DROP TABLE run_providers;
DROP TABLE provider_prices;
ALTER TABLE benchmarks DROP COLUMN fleet_repository;
