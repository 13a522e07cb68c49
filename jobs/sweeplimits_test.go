package jobs

import "testing"

// A step is a concurrency only when named as agentd's load generator
// names one; the first step whose runtime queued or preempted is where
// each began, and unread steps conclude nothing.
func TestSweepLimits(t *testing.T) {
	for name, want := range map[string]int{"concurrency 8": 8, "concurrency 1": 1, "concurrency 0": 0, "concurrency x": 0, "rate 2.50/s": 0, "max": 0, "": 0} {
		if got := StepConcurrency(name); got != want {
			t.Errorf("StepConcurrency(%q) = %d, want %d", name, got, want)
		}
	}
	f := func(v float64) *float64 { return &v }
	rate := 2.5
	steps := []StepSummary{
		{Name: "sequential"},
		{Name: "concurrency 2", Runtime: &RuntimeState{Readings: 3, MaxWaiting: f(0), Preemptions: f(0)}},
		{Name: "rate 2.50/s", OfferedRPS: &rate, Runtime: &RuntimeState{Readings: 2, MaxWaiting: f(1), Preemptions: f(0)}},
		{Name: "concurrency 16", Runtime: &RuntimeState{Readings: 2, MaxWaiting: f(5), Preemptions: f(3)}},
	}
	l := FindSweepLimits(steps)
	if l.Measured != 3 || l.QueueingStep != "rate 2.50/s" || l.QueueingConcurrency != 0 || l.QueueingOfferedRPS == nil || *l.QueueingOfferedRPS != 2.5 ||
		l.PreemptingStep != "concurrency 16" || l.PreemptingConcurrency != 16 {
		t.Errorf("limits %+v", l)
	}
	if l := FindSweepLimits(steps[:1]); l.Measured != 0 || l.QueueingStep != "" {
		t.Errorf("unread: %+v", l)
	}
}
