DROP INDEX runs_fleet_run_id_key;
ALTER TABLE runs DROP COLUMN fleet_run_id;
DROP INDEX benchmarks_fleet_id_idx;
ALTER TABLE benchmarks DROP COLUMN fleet_scenario, DROP COLUMN fleet_id;
DROP TABLE fleets;
