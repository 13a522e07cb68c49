DROP INDEX runs_deployment_idx;
