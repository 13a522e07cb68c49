-- RunDrift reads a deployment's (hardware profile × runtime) newest
-- completed runs on every comparison: an index keeps that a short scan.
CREATE INDEX runs_deployment_idx ON runs (hardware_profile, runtime, id DESC) WHERE state = 'completed';
