package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
)

// seedStarterDatasets stores the starter datasets, shared and owned by the
// first administrator, unless they are there already.
func seedStarterDatasets(ctx context.Context, up *ingest.Uploader, out io.Writer) error {
	n, err := up.Store.CountStarterDatasets(ctx)
	if err != nil || n > 0 {
		return err
	}
	admin, err := up.Store.FirstAdmin(ctx)
	if err != nil {
		return fmt.Errorf("seed starter datasets: an administrator owns them; create one first (ruckus user create --admin): %w", err)
	}
	for _, d := range starter.All {
		b, err := starter.Open(d)
		if err != nil {
			return err
		}
		res, err := up.Upload(ctx, ingest.Source{File: bytes.NewReader(b)}, ingest.Request{
			Viewer: store.Viewer{UserID: admin.ID, Admin: true}, FileName: d.File, Name: d.Name,
			Visibility: store.VisibilityShared, AllowDuplicate: true, Starter: true, Scorer: d.Scorer,
		})
		if err != nil {
			return fmt.Errorf("seed %s: %w %v", d.File, err, res.Errors)
		}
		fmt.Fprintf(out, "seeded starter dataset %q (%d items)\n", res.Dataset.Name, res.Dataset.ItemCount)
	}
	return nil
}

// starterModels are common open models, names and sizes only, so the
// registry is not empty on a first run.
var starterModels = []store.ModelFields{
	{Name: "Qwen/Qwen2.5-0.5B-Instruct", DisplayName: "Qwen2.5 0.5B Instruct", Family: "qwen2.5", ParamsB: 0.49, Quantization: "bf16", ContextLength: 32768, License: "apache-2.0"},
	{Name: "Qwen/Qwen2.5-7B-Instruct", DisplayName: "Qwen2.5 7B Instruct", Family: "qwen2.5", ParamsB: 7.6, Quantization: "bf16", ContextLength: 131072, License: "apache-2.0"},
	{Name: "meta-llama/Llama-3.1-8B-Instruct", DisplayName: "Llama 3.1 8B Instruct", Family: "llama3.1", ParamsB: 8.0, Quantization: "bf16", ContextLength: 131072, License: "llama3.1"},
	{Name: "mistralai/Mistral-7B-Instruct-v0.3", DisplayName: "Mistral 7B Instruct v0.3", Family: "mistral", ParamsB: 7.2, Quantization: "bf16", ContextLength: 32768, License: "apache-2.0"},
	{Name: "google/gemma-2-9b-it", DisplayName: "Gemma 2 9B IT", Family: "gemma2", ParamsB: 9.2, Quantization: "bf16", ContextLength: 8192, License: "gemma"},
	{Name: "microsoft/Phi-3.5-mini-instruct", DisplayName: "Phi-3.5 mini instruct", Family: "phi3.5", ParamsB: 3.8, Quantization: "bf16", ContextLength: 131072, License: "mit"},
}

// seedModels fills an empty model registry with starterModels.
func seedModels(ctx context.Context, st *store.Store, out io.Writer) error {
	n, err := st.CountModels(ctx)
	if err != nil || n > 0 {
		return err
	}
	for _, m := range starterModels {
		if _, err := st.CreateModel(ctx, m); err != nil {
			return fmt.Errorf("seed model %s: %w", m.Name, err)
		}
	}
	fmt.Fprintf(out, "seeded %d models into the registry\n", len(starterModels))
	return nil
}

// cmdSeed is `ruckus seed`: the starter datasets and models, as `make run`
// loads them into a new database. Running it again changes nothing.
func cmdSeed(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("seed", "ruckus seed", out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, cfg, closeDB, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	// The starter datasets belong to the first administrator. On a new
	// database (compose.yaml seeds before the server first starts) that is
	// made here, from RUCKUS_ADMIN_EMAIL/RUCKUS_ADMIN_PASSWORD, exactly as
	// `ruckus serve` would.
	pw, err := auth.NewPasswords(cfg.PasswordCost)
	if err != nil {
		return err
	}
	if err := bootstrapAdmin(ctx, st, pw, cfg, out); err != nil {
		return err
	}
	if err := seedStarterDatasets(ctx, &ingest.Uploader{Store: st, Limits: datasetLimits(cfg)}, out); err != nil {
		return err
	}
	return seedModels(ctx, st, out)
}
