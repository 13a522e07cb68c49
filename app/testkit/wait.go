package testkit

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// WaitTimeout is how long WaitFor waits before it fails the test, before
// scaling. It is generous: the wait is for something that will happen, not
// a measure of how fast it happens.
const WaitTimeout = 30 * time.Second

// TimeoutScaleEnv names the environment variable that multiplies
// WaitTimeout, for slow or crowded machines: RUCKUS_TEST_TIMEOUT_SCALE=3
// waits three times as long. Unset, empty or not a positive number is 1.
const TimeoutScaleEnv = "RUCKUS_TEST_TIMEOUT_SCALE"

// Timeout is WaitTimeout scaled by RUCKUS_TEST_TIMEOUT_SCALE.
func Timeout() time.Duration {
	return Scaled(WaitTimeout)
}

// Scaled is d multiplied by RUCKUS_TEST_TIMEOUT_SCALE, for a test's own
// deadlines.
func Scaled(d time.Duration) time.Duration {
	s, err := strconv.ParseFloat(os.Getenv(TimeoutScaleEnv), 64)
	if err != nil || !(s > 0) {
		return d
	}
	return time.Duration(float64(d) * s)
}

// WaitFor polls cond until it holds, failing the test with what it waited
// for when Timeout passes first.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	WaitWithin(tb, WaitTimeout, what, cond)
}

// WaitWithin is WaitFor for what takes longer than WaitTimeout even on a
// quiet machine (a whole run on an agent): it waits limit, scaled.
func WaitWithin(tb testing.TB, limit time.Duration, what string, cond func() bool) {
	tb.Helper()
	timeout := Scaled(limit)
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s (raise %s to wait longer)", timeout, what, TimeoutScaleEnv)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
