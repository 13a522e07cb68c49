DROP TABLE IF EXISTS run_attestations;
