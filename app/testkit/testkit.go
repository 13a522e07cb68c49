package testkit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Store returns a store over the test's own fresh, migrated database.
func Store(tb testing.TB) *store.Store {
	tb.Helper()
	return store.New(pgtest.NewDB(tb))
}

// unique is a short random word that keeps defaulted names apart.
func unique() string { return strings.ToLower(rand.Text()[:8]) }

// UserOpts are a user's fields; zero values are defaulted.
type UserOpts struct {
	Email        string // default user-<random>@example.com
	Name         string
	PasswordHash string // default "x": no password signs in
	Role         string // default store.RoleUser
}

// User creates a user.
func User(ctx context.Context, tb testing.TB, st *store.Store, opts *UserOpts) store.User {
	tb.Helper()
	o := deref(opts)
	if o.Email == "" {
		o.Email = "user-" + unique() + "@example.com"
	}
	if o.PasswordHash == "" {
		o.PasswordHash = "x"
	}
	if o.Role == "" {
		o.Role = store.RoleUser
	}
	u, err := st.CreateUser(ctx, store.NewUser{Email: o.Email, Name: o.Name, PasswordHash: o.PasswordHash, Role: o.Role})
	if err != nil {
		tb.Fatalf("testkit.User: %v", err)
	}
	return u
}

// DatasetOpts describe a dataset. With Content it is uploaded as a user
// uploads a file (parsed, checked, its format and scorer guessed); without,
// it is Items chat items written straight to the store.
type DatasetOpts struct {
	// Owner is the owning user's id; default a new user.
	Owner int64
	// Name defaults to "dataset-<random>" (or, uploaded, what the file's
	// name gives).
	Name       string
	Visibility string // default private
	// Items is how many items to write (default 2) when Content is empty:
	// item i has custom id "item-i", asks "q<i>" and expects "a<i>", in
	// the "simple" format scored by exact match.
	Items int
	// Content is a file to upload, named FileName (default "d.jsonl").
	Content  string
	FileName string
	// Shots, AllowDuplicate, Starter and Scorer are the upload's options
	// (ingest.Request).
	Shots          int
	AllowDuplicate bool
	Starter        bool
	Scorer         string
}

// Dataset creates a dataset and returns it as its owner sees it.
func Dataset(ctx context.Context, tb testing.TB, st *store.Store, opts *DatasetOpts) store.Dataset {
	tb.Helper()
	o := deref(opts)
	if o.Owner == 0 {
		o.Owner = User(ctx, tb, st, nil).ID
	}
	if o.Content != "" {
		return upload(ctx, tb, st, o)
	}
	if o.Name == "" {
		o.Name = "dataset-" + unique()
	}
	if o.Visibility == "" {
		o.Visibility = store.VisibilityPrivate
	}
	if o.Items == 0 {
		o.Items = 2
	}
	if o.Scorer == "" {
		o.Scorer = "exact"
	}
	items := make([]store.DatasetItem, o.Items)
	for i := range items {
		items[i] = store.DatasetItem{Idx: i, CustomID: fmt.Sprintf("item-%d", i),
			Request:   json.RawMessage(fmt.Sprintf(`{"body":{"messages":[{"role":"user","content":"q%d"}]}}`, i)),
			Reference: json.RawMessage(fmt.Sprintf(`"a%d"`, i))}
	}
	id, err := st.WriteDataset(ctx, store.NewDataset{OwnerID: o.Owner, Name: o.Name, Format: "simple", Visibility: o.Visibility, Starter: o.Starter},
		store.ItemsFrom(items), func(*store.Queries, int64) (store.DatasetTotals, error) {
			return store.DatasetTotals{Name: o.Name, Visibility: o.Visibility, Format: "simple", TaskKind: "chat",
				DefaultScorer: o.Scorer, Bytes: int64(100 * o.Items), SHA256: fmt.Sprintf("%x", sha256.Sum256([]byte(o.Name)))}, nil
		})
	if err != nil {
		tb.Fatalf("testkit.Dataset: %v", err)
	}
	ds, err := st.DatasetByID(ctx, store.Viewer{UserID: o.Owner, Admin: true}, id)
	if err != nil {
		tb.Fatalf("testkit.Dataset: read back: %v", err)
	}
	return ds
}

func upload(ctx context.Context, tb testing.TB, st *store.Store, o DatasetOpts) store.Dataset {
	tb.Helper()
	if o.FileName == "" {
		o.FileName = "d.jsonl"
	}
	owner, err := st.UserByID(ctx, o.Owner)
	if err != nil {
		tb.Fatalf("testkit.Dataset: owner: %v", err)
	}
	up := &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()}
	res, err := up.Upload(ctx, ingest.Source{File: strings.NewReader(o.Content)}, ingest.Request{Viewer: store.Viewer{UserID: owner.ID, Admin: owner.IsAdmin()},
		FileName: o.FileName, Name: o.Name, Visibility: o.Visibility, AllowDuplicate: o.AllowDuplicate, Starter: o.Starter,
		Shots: o.Shots, Scorer: o.Scorer})
	if err != nil {
		tb.Fatalf("testkit.Dataset: upload: %v", err)
	}
	if res.ErrorCount > 0 {
		tb.Fatalf("testkit.Dataset: upload: %d bad lines, first %+v", res.ErrorCount, res.Errors[0])
	}
	return res.Dataset
}

// ModelOpts are a model's fields; zero values are defaulted.
type ModelOpts struct {
	Name          string // default "org/model-<random>"
	DisplayName   string // default Name
	Family        string
	ParamsB       float64 // default 0.5
	Quantization  string
	ContextLength int // default 4096
	License       string
	MemoryGB      *float64
}

// Model adds a model to the catalogue and returns its id.
func Model(ctx context.Context, tb testing.TB, st *store.Store, opts *ModelOpts) int64 {
	tb.Helper()
	o := deref(opts)
	if o.Name == "" {
		o.Name = "org/model-" + unique()
	}
	if o.ParamsB == 0 {
		o.ParamsB = 0.5
	}
	if o.ContextLength == 0 {
		o.ContextLength = 4096
	}
	id, err := st.CreateModel(ctx, store.ModelFields{Name: o.Name, DisplayName: o.DisplayName, Family: o.Family, ParamsB: o.ParamsB,
		Quantization: o.Quantization, ContextLength: o.ContextLength, License: o.License, MemoryGB: o.MemoryGB})
	if err != nil {
		tb.Fatalf("testkit.Model: %v", err)
	}
	return id
}

// AgentOpts are what an agent declares when it registers; zero values are
// defaulted.
type AgentOpts struct {
	Name            string // default "agent-<random>"
	Host            string
	Version         string
	ProtocolVersion int      // default jobs.ProtocolVersion
	Runtimes        []string // default sim; set empty but non-nil for none
	// Profile is the hardware profile declared; default a two-core CPU
	// machine, "cpu". The GPUs it names are the machine's.
	Profile store.HardwareProfile
	// NoProfile declares no hardware profile at all.
	NoProfile bool
	// Capabilities, when set, are sent as they are instead of those built
	// from the profile and runtimes.
	Capabilities json.RawMessage
}

// Agent registers an agent as agentd does: its capabilities (protocol,
// hardware, runtimes) and the hardware profile drawn from them. The first
// registration of a profile creates it, so a run may name it afterwards.
func Agent(ctx context.Context, tb testing.TB, st *store.Store, opts *AgentOpts) store.Agent {
	tb.Helper()
	o := deref(opts)
	if o.Name == "" {
		o.Name = "agent-" + unique()
	}
	if o.ProtocolVersion == 0 {
		o.ProtocolVersion = jobs.ProtocolVersion
	}
	if o.Runtimes == nil {
		o.Runtimes = []string{"sim"}
	}
	if o.Profile.Slug == "" && !o.NoProfile {
		o.Profile = store.HardwareProfile{Slug: "cpu", CPUCores: 2}
	}
	if o.Capabilities == nil {
		hw := jobs.Hardware{CPUCores: o.Profile.CPUCores}
		for range o.Profile.GPUCount {
			hw.GPUs = append(hw.GPUs, jobs.GPU{Name: o.Profile.GPUName, MemoryBytes: uint64(o.Profile.GPUMemoryBytes)})
		}
		caps, err := json.Marshal(jobs.Capabilities{ProtocolVersion: o.ProtocolVersion, Hardware: hw, Runtimes: o.Runtimes})
		if err != nil {
			tb.Fatal(err)
		}
		o.Capabilities = caps
	}
	a, err := st.RegisterAgent(ctx, store.AgentRegistration{Name: o.Name, Host: o.Host, Version: o.Version, ProtocolVersion: o.ProtocolVersion,
		Runtimes: o.Runtimes, Capabilities: o.Capabilities, Profile: o.Profile})
	if err != nil {
		tb.Fatalf("testkit.Agent: %v", err)
	}
	return a
}

// BenchmarkOpts describe a benchmark row; zero values are defaulted.
type BenchmarkOpts struct {
	// Dataset is the dataset benchmarked; default a new one of Owner's.
	Dataset int64
	// Owner defaults to the dataset's owner (or a new user).
	Owner    int64
	Name     string          // default "bench"
	Manifest json.RawMessage // default {"scorer":"exact"}
}

// Benchmark inserts a benchmark row without runs (Run adds them) and
// returns its id; bench.Service.Create is the way a user makes one.
func Benchmark(ctx context.Context, tb testing.TB, st *store.Store, opts *BenchmarkOpts) int64 {
	tb.Helper()
	o := deref(opts)
	if o.Dataset == 0 {
		ds := Dataset(ctx, tb, st, &DatasetOpts{Owner: o.Owner})
		o.Dataset, o.Owner = ds.ID, ds.OwnerID
	}
	if o.Owner == 0 {
		ds, err := st.DatasetByID(ctx, store.Viewer{Admin: true}, o.Dataset)
		if err != nil {
			tb.Fatalf("testkit.Benchmark: dataset: %v", err)
		}
		o.Owner = ds.OwnerID
	}
	if o.Name == "" {
		o.Name = "bench"
	}
	if o.Manifest == nil {
		o.Manifest = json.RawMessage(`{"scorer":"exact"}`)
	}
	id, err := st.CreateBenchmark(ctx, o.Owner, o.Name, o.Dataset, o.Manifest)
	if err != nil {
		tb.Fatalf("testkit.Benchmark: %v", err)
	}
	return id
}

// RunOpts describe a run row; zero values are defaulted.
type RunOpts struct {
	Benchmark int64  // default a new benchmark
	Model     int64  // default a new model
	Runtime   string // default sim
	// HardwareProfile defaults to cpu; the profile must exist (Agent
	// registers it).
	HardwareProfile string
	Total           int // default 2, the default dataset's items
	Samples         int
	Repeat          int
	WaitingForAgent bool
	// JobID, when set, is recorded as the River job working the run.
	JobID int64
}

// Run inserts a queued run and returns its id.
func Run(ctx context.Context, tb testing.TB, st *store.Store, opts *RunOpts) int64 {
	tb.Helper()
	o := deref(opts)
	if o.Benchmark == 0 {
		o.Benchmark = Benchmark(ctx, tb, st, nil)
	}
	if o.Model == 0 {
		o.Model = Model(ctx, tb, st, nil)
	}
	if o.Runtime == "" {
		o.Runtime = "sim"
	}
	if o.HardwareProfile == "" {
		o.HardwareProfile = "cpu"
	}
	if o.Total == 0 {
		o.Total = 2
	}
	id, err := st.CreateRun(ctx, store.NewRun{BenchmarkID: o.Benchmark, ModelID: o.Model, Runtime: o.Runtime, HardwareProfile: o.HardwareProfile,
		WaitingForAgent: o.WaitingForAgent, Total: o.Total, Samples: o.Samples, Repeat: o.Repeat})
	if err != nil {
		tb.Fatalf("testkit.Run: %v", err)
	}
	if o.JobID != 0 {
		if err := st.SetRunJob(ctx, id, o.JobID); err != nil {
			tb.Fatalf("testkit.Run: %v", err)
		}
	}
	return id
}

// World is one of everything a run needs: an owner, a dataset, a model, an
// agent serving cpu/sim, and a benchmark with one run of the model on it.
type World struct {
	Owner     store.User
	Viewer    store.Viewer
	Dataset   store.Dataset
	Model     int64
	Agent     store.Agent
	Benchmark int64
	Run       int64
}

// WorldOpts shape a World; zero values are defaulted as in the functions
// that build each part.
type WorldOpts struct {
	Dataset DatasetOpts
	Model   ModelOpts
	Agent   AgentOpts
	Run     RunOpts // Total defaults to the dataset's items
}

// NewWorld builds a World.
func NewWorld(ctx context.Context, tb testing.TB, st *store.Store, opts *WorldOpts) World {
	tb.Helper()
	o := deref(opts)
	var w World
	if o.Dataset.Owner == 0 {
		w.Owner = User(ctx, tb, st, nil)
		o.Dataset.Owner = w.Owner.ID
	} else {
		u, err := st.UserByID(ctx, o.Dataset.Owner)
		if err != nil {
			tb.Fatalf("testkit.NewWorld: owner: %v", err)
		}
		w.Owner = u
	}
	w.Viewer = store.Viewer{UserID: w.Owner.ID, Admin: w.Owner.IsAdmin()}
	w.Dataset = Dataset(ctx, tb, st, &o.Dataset)
	w.Model = Model(ctx, tb, st, &o.Model)
	w.Agent = Agent(ctx, tb, st, &o.Agent)
	w.Benchmark = Benchmark(ctx, tb, st, &BenchmarkOpts{Dataset: w.Dataset.ID, Owner: w.Owner.ID})
	o.Run.Benchmark, o.Run.Model = w.Benchmark, w.Model
	if o.Run.HardwareProfile == "" {
		o.Run.HardwareProfile = w.Agent.Profile
	}
	if o.Run.Total == 0 {
		o.Run.Total = w.Dataset.ItemCount
	}
	w.Run = Run(ctx, tb, st, &o.Run)
	return w
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}
