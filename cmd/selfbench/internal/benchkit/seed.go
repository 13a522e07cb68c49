package benchkit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Fleet is what a results benchmark seeds before its runs: a dataset of
// arithmetic questions, models to target (one per target of a benchmark)
// and a sim agent on the "cpu" profile.
type Fleet struct {
	DatasetID int64
	Models    []string
	Agent     store.Agent
}

// SeedFleet uploads a dataset of items questions for v and registers
// models models and an agent, named apart from an earlier run's.
func SeedFleet(ctx context.Context, st *store.Store, v store.Viewer, items, models int) (Fleet, error) {
	var f Fleet
	var ds strings.Builder
	for i := range items {
		fmt.Fprintf(&ds, "{\"custom_id\":\"item-%05d\",\"prompt\":\"Question %d: what is %d plus %d?\",\"reference\":\"%d\"}\n", i, i, i, i, 2*i)
	}
	up := &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()}
	res, err := up.Upload(ctx, ingest.Source{File: strings.NewReader(ds.String())}, ingest.Request{Viewer: v, FileName: "bench.jsonl"})
	if err != nil {
		return f, err
	}
	f.DatasetID = res.Dataset.ID
	stamp := time.Now().UnixNano()
	f.Models = make([]string, models)
	for i := range f.Models {
		f.Models[i] = fmt.Sprintf("bench/model-%d-%02d", stamp, i)
		if _, err := st.CreateModel(ctx, store.ModelFields{Name: f.Models[i], ParamsB: 1, Quantization: "bf16", ContextLength: 4096}); err != nil {
			return f, err
		}
	}
	f.Agent, err = st.RegisterAgent(ctx, store.AgentRegistration{Name: fmt.Sprintf("bench-%d", time.Now().UnixNano()), ProtocolVersion: jobs.ProtocolVersion,
		Runtimes: []string{"sim"}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 2}})
	return f, err
}
