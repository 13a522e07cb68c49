// Package benchkit holds what the self-benchmark programs under
// cmd/selfbench share: child processes with their output kept (start,
// wait for, stop, read memory), the migrated database DATABASE_URL names,
// a `ruckus serve` on a free loopback port, psql, and random names.
package benchkit
