package handlers

import (
	"context"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/capacity"
)

// The planner's configuration from its form: whatever is typed, it is
// refused with errors or checked against the runtime's table, and a
// configuration the best-configuration page's link writes (planURL) reads
// back as the same settings.
func FuzzCapacityConfigurationForm(f *testing.F) {
	for _, s := range [][2]string{{"sim", "max_num_seqs=16, tensor_parallel_size=2"}, {"ollama", "num_parallel=4"}, {"vllm", "bogus=1"},
		{"sim", ""}, {"tgi", "max_batch_total_tokens=1e3;"}, {"llama-cpp", "parallel=-1, ctx_size"}} {
		f.Add("m/one", s[0], "gpu-2x", s[1])
	}
	ctx := i18n.With(context.Background(), i18n.Default().Lang("en"))
	f.Fuzz(func(t *testing.T, model, runtime, hardware, engine string) {
		k, errs := formConfiguration(ctx, capacity.Form{ConfigModel: model, ConfigRuntime: runtime, ConfigHardware: hardware, ConfigEngine: engine})
		if strings.TrimSpace(model) == "" {
			if k != nil || errs != nil {
				t.Fatalf("no model: %+v %v", k, errs)
			}
			return
		}
		if len(errs) > 0 {
			return
		}
		if _, faults := jobs.CheckEngine(runtime, k.Engine, -1); len(faults) > 0 {
			t.Fatalf("accepted settings %v are refused: %v", k.Engine, faults)
		}
		link := planURL(1, conclude.Configuration{Model: model, Runtime: runtime, Hardware: hardware, Engine: k.engine})
		back, errs := formConfiguration(ctx, capacity.Form{ConfigModel: model, ConfigRuntime: runtime, ConfigHardware: hardware,
			ConfigEngine: strings.ReplaceAll(k.engine.Key(), " ", ", ")})
		if len(errs) > 0 || back.engine.Key() != k.engine.Key() || !strings.HasPrefix(link, "/capacity?") {
			t.Fatalf("%q read back as %q (%v)", k.engine.Key(), back.engine.Key(), errs)
		}
	})
}
