DROP TABLE run_provider_prices;
DROP TABLE provider_prices;
ALTER TABLE benchmarks DROP COLUMN fleet_repository;
