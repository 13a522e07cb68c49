package testkit_test

import (
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// Every option left out, the factory still builds a whole world: a run of
// a model on a dataset's benchmark, on the profile a sim agent serves.
func TestNewWorldDefaults(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := testkit.Store(t)
	w := testkit.NewWorld(ctx, t, st, nil)
	b, err := st.BenchmarkByID(ctx, w.Viewer, w.Benchmark)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Runs) != 1 || b.Runs[0].ID != w.Run || b.Runs[0].Runtime != "sim" || b.Runs[0].HardwareProfile != "cpu" || b.Runs[0].Total != 2 {
		t.Fatalf("runs: %+v", b.Runs)
	}
	if w.Dataset.ItemCount != 2 || w.Agent.Profile != "cpu" || len(w.Agent.Runtimes) != 1 || w.Agent.Runtimes[0] != "sim" {
		t.Fatalf("dataset %+v agent %+v", w.Dataset, w.Agent)
	}
	// Two defaulted users do not collide.
	if a, b := testkit.User(ctx, t, st, nil), testkit.User(ctx, t, st, nil); a.Email == b.Email || a.Role != store.RoleUser {
		t.Fatalf("users %+v %+v", a, b)
	}
}

func TestScaledByTheEnvironment(t *testing.T) {
	t.Setenv(testkit.TimeoutScaleEnv, "3")
	if got := testkit.Timeout(); got != 3*testkit.WaitTimeout {
		t.Fatalf("scaled timeout %s", got)
	}
	t.Setenv(testkit.TimeoutScaleEnv, "nonsense")
	if got := testkit.Scaled(time.Second); got != time.Second {
		t.Fatalf("unscaled %s", got)
	}
}
