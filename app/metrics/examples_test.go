package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/metrics"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// scaledObject and hpa are the parts of the examples that name the metric.
type scaledObject struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Triggers []struct {
			Type     string            `yaml:"type"`
			Metadata map[string]string `yaml:"metadata"`
		} `yaml:"triggers"`
	} `yaml:"spec"`
}

type hpa struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Metrics []struct {
			External struct {
				Metric struct {
					Name     string `yaml:"name"`
					Selector struct {
						MatchLabels map[string]string `yaml:"matchLabels"`
					} `yaml:"selector"`
				} `yaml:"metric"`
			} `yaml:"external"`
		} `yaml:"metrics"`
	} `yaml:"spec"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The KEDA and HPA examples parse, and the series they select is one the
// server serves once a run waits on that queue: same metric name, same
// labels, same values.
func TestScalingExamplesNameTheServedMetric(t *testing.T) {
	t.Parallel()
	var so scaledObject
	readYAML(t, "examples/keda-scaledobject.yaml", &so)
	if so.Kind != "ScaledObject" || len(so.Spec.Triggers) != 1 || so.Spec.Triggers[0].Type != "prometheus" {
		t.Fatalf("ScaledObject: %+v", so)
	}
	query := so.Spec.Triggers[0].Metadata["query"]
	m := regexp.MustCompile(`^sum\((\w+)\{hardware_profile="([^"]+)",runtime="([^"]+)"\}\)$`).FindStringSubmatch(query)
	if m == nil {
		t.Fatalf("KEDA query %q is not sum(metric{hardware_profile=…,runtime=…})", query)
	}
	var h hpa
	readYAML(t, "examples/hpa.yaml", &h)
	if h.Kind != "HorizontalPodAutoscaler" || len(h.Spec.Metrics) != 1 {
		t.Fatalf("HPA: %+v", h)
	}
	ext := h.Spec.Metrics[0].External.Metric
	if ext.Name != m[1] || ext.Selector.MatchLabels["hardware_profile"] != m[2] || ext.Selector.MatchLabels["runtime"] != m[3] {
		t.Fatalf("the HPA selects %s %v, the ScaledObject %s", ext.Name, ext.Selector.MatchLabels, query)
	}

	pool := pgtest.NewDB(t)
	ctx := context.Background()
	rc := testkit.RiverClient(t.Context(), t, pool, nil)
	for i := range 3 {
		if _, err := rc.Insert(ctx, jobs.RunArgs{RunID: int64(i + 1), HardwareProfile: m[2], Runtime: m[3]}, nil); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := metrics.NewServer(ctx, store.New(pool), pool, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	families, err := srv.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		if f.GetName() != m[1] {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["hardware_profile"] == m[2] && labels["runtime"] == m[3] && labels["queue"] == jobs.Queue(m[2], m[3]) {
				found = true
				if v := s.GetGauge().GetValue(); v != 3 {
					t.Errorf("%s%v = %v, want the 3 waiting runs", m[1], labels, v)
				}
			}
		}
	}
	if !found {
		t.Fatalf("the server serves no %s{hardware_profile=%q,runtime=%q}: %v", m[1], m[2], m[3], families)
	}
}

func TestQueueLabels(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][2]string{
		"h100-80gb-x1_vllm": {"h100-80gb-x1", "vllm"},
		"cpu_llama-cpp":     {"cpu", "llama-cpp"},
		jobs.ServerQueue:    {"", ""},
		"_x":                {"", ""},
	} {
		p, r := metrics.QueueLabels(q)
		if p != want[0] || r != want[1] {
			t.Errorf("QueueLabels(%q) = %q, %q; want %v", q, p, r, want)
		}
	}
}
