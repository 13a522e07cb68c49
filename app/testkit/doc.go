// Package testkit is a test-only fixture factory: it builds the rows a test
// needs (users, datasets, models, agents, benchmarks, runs), the benchmark
// service with a River client, and waits on conditions, so that a test asks
// for its world in a few lines instead of rebuilding it by hand.
//
// Every function takes the test's context, the test, the store to write
// through and an options struct whose zero value (or nil) gives sensible
// defaults, after River's internal testfactory. A failure fails the test.
//
// It is imported by tests only; nothing in the programs may import it.
package testkit
