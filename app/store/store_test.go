package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// testBundle is what a store test works with: a fresh database and the
// rows most tests need.
type testBundle struct {
	ctx          context.Context
	owner, other store.User
	admin        store.User
	ownerV       store.Viewer
	otherV       store.Viewer
	adminV       store.Viewer
}

func setupStore(t *testing.T) (*store.Store, *testBundle) {
	t.Helper()
	st := testkit.Store(t)
	b := &testBundle{ctx: context.Background()}
	b.owner = createUser(t, st, "owner@example.com", store.RoleUser)
	b.other = createUser(t, st, "other@example.com", store.RoleUser)
	b.admin = createUser(t, st, "admin@example.com", store.RoleAdmin)
	b.ownerV = store.Viewer{UserID: b.owner.ID}
	b.otherV = store.Viewer{UserID: b.other.ID}
	b.adminV = store.Viewer{UserID: b.admin.ID, Admin: true}
	return st, b
}

func createUser(t *testing.T, st *store.Store, email, role string) store.User {
	t.Helper()
	return testkit.User(t.Context(), t, st, &testkit.UserOpts{Email: email, Name: email, PasswordHash: "hash-" + email, Role: role})
}

// createDataset stores a dataset of n items the way an upload does: the
// row, the items by COPY and the totals, in one transaction.
func createDataset(t *testing.T, st *store.Store, ownerID int64, name, visibility string, n int) int64 {
	t.Helper()
	return testkit.Dataset(t.Context(), t, st, &testkit.DatasetOpts{Owner: ownerID, Name: name, Visibility: visibility, Items: n}).ID
}

// runFixture is a one-run benchmark on a dataset of items, with an agent
// and a job id for the run.
type runFixture struct {
	datasetID, benchmarkID, runID, jobID int64
	agent                                store.Agent
}

func createRun(t *testing.T, st *store.Store, b *testBundle, items int) runFixture {
	t.Helper()
	w := testkit.NewWorld(b.ctx, t, st, &testkit.WorldOpts{
		Dataset: testkit.DatasetOpts{Owner: b.owner.ID, Name: "runs", Items: items},
		Model:   testkit.ModelOpts{DisplayName: "Model"},
		Agent:   testkit.AgentOpts{Host: "node", Version: "test"},
	})
	f := runFixture{datasetID: w.Dataset.ID, benchmarkID: w.Benchmark, runID: w.Run, agent: w.Agent}
	f.jobID = 7000 + f.runID
	if err := st.SetRunJob(b.ctx, f.runID, f.jobID); err != nil {
		t.Fatal(err)
	}
	return f
}

func okResult(idx, tokens int) store.ResultRecord {
	return store.ResultRecord{Result: jobs.Result{Idx: idx, CustomID: fmt.Sprintf("item-%d", idx), Status: jobs.StatusOK,
		Output: fmt.Sprintf("a%d", idx), PromptTokens: 3, CompletionTokens: tokens, ContentEvents: tokens,
		TTFT: 20 * time.Millisecond, E2E: 100 * time.Millisecond}, SentAt: time.Now()}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *testBundle) { return setupStore(t) }

	t.Run("CreateAndRead", func(t *testing.T) {
		t.Parallel()
		st, b := setup(t)
		got, err := st.UserByEmail(b.ctx, "owner@example.com")
		if err != nil || got.ID != b.owner.ID || got.Role != store.RoleUser || got.PasswordHash != "hash-owner@example.com" || got.Disabled() {
			t.Fatalf("by email: %+v %v", got, err)
		}
		if got, err := st.UserByID(b.ctx, b.admin.ID); err != nil || !got.IsAdmin() || got.Email != "admin@example.com" {
			t.Fatalf("by id: %+v %v", got, err)
		}
		if _, err := st.UserByID(b.ctx, b.admin.ID+100); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing user: %v", err)
		}
		users, err := st.ListUsers(b.ctx)
		if err != nil || len(users) != 3 {
			t.Fatalf("list: %d %v", len(users), err)
		}
	})

	t.Run("EmailTaken", func(t *testing.T) {
		t.Parallel()
		st, b := setup(t)
		_, err := st.CreateUser(b.ctx, store.NewUser{Email: b.owner.Email, Name: "again", PasswordHash: "x", Role: store.RoleUser})
		if !errors.Is(err, store.ErrEmailTaken) {
			t.Fatalf("second user with the same email: %v", err)
		}
	})

	t.Run("DisableEndsSessionsAndAdminCount", func(t *testing.T) {
		t.Parallel()
		st, b := setup(t)
		if n, err := st.CountActiveAdmins(b.ctx); err != nil || n != 1 {
			t.Fatalf("active admins: %d %v", n, err)
		}
		sid := []byte("session-of-owner")
		if err := st.SaveSession(b.ctx, store.Session{ID: sid, UserID: b.owner.ID, Data: []byte("d"), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := st.SetUserDisabled(b.ctx, b.owner.ID, true); err != nil {
			t.Fatal(err)
		}
		if _, err := st.LiveSession(b.ctx, sid); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a disabled user's session is still live: %v", err)
		}
		if n, err := st.CountUserSessions(b.ctx, b.owner.ID); err != nil || n != 0 {
			t.Errorf("sessions left: %d %v", n, err)
		}
		u, _ := st.UserByID(b.ctx, b.owner.ID)
		if !u.Disabled() {
			t.Error("not disabled")
		}
		if err := st.SetUserDisabled(b.ctx, b.admin.ID+100, true); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("disable a missing user: %v", err)
		}
		if err := st.SetUserDisabled(b.ctx, b.admin.ID, true); err != nil {
			t.Fatal(err)
		}
		if n, err := st.CountActiveAdmins(b.ctx); err != nil || n != 0 {
			t.Errorf("active admins after disabling: %d %v", n, err)
		}
	})

	t.Run("ResetPasswordRevokesTokensAndSessions", func(t *testing.T) {
		t.Parallel()
		st, b := setup(t)
		for i := range 2 {
			if _, err := st.CreateAPIToken(b.ctx, b.owner.ID, fmt.Sprint("t", i), "rk_x", []byte(fmt.Sprint("hash", i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.SaveSession(b.ctx, store.Session{ID: []byte("s"), UserID: b.owner.ID, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		revoked, err := st.ResetUserPassword(b.ctx, b.owner.ID, "new-hash")
		if err != nil || revoked != 2 {
			t.Fatalf("reset: %d revoked, %v", revoked, err)
		}
		u, _ := st.UserByID(b.ctx, b.owner.ID)
		if u.PasswordHash != "new-hash" || !u.PasswordChangedAt.After(b.owner.PasswordChangedAt) {
			t.Errorf("after reset: %+v", u)
		}
		if _, err := st.UserByAPIToken(b.ctx, []byte("hash0")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a token survived the reset: %v", err)
		}
		if n, _ := st.CountUserSessions(b.ctx, b.owner.ID); n != 0 {
			t.Errorf("%d sessions survived the reset", n)
		}
	})
}

func TestAPITokens(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *testBundle) { return setupStore(t) }
	st, b := setup(t)
	hash := sha256.Sum256([]byte("rk_secret"))
	tok, err := st.CreateAPIToken(b.ctx, b.owner.ID, "ci", "rk_secr", hash[:])
	if err != nil {
		t.Fatal(err)
	}
	if u, err := st.UserByAPIToken(b.ctx, hash[:]); err != nil || u.ID != b.owner.ID {
		t.Fatalf("user by token: %+v %v", u, err)
	}
	if list, err := st.ListAPITokens(b.ctx, b.owner.ID); err != nil || len(list) != 1 || list[0].ID != tok.ID {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list, _ := st.ListAPITokens(b.ctx, b.other.ID); len(list) != 0 {
		t.Errorf("another user sees %d tokens", len(list))
	}
	// Only the owner revokes a token.
	if err := st.RevokeAPIToken(b.ctx, b.other.ID, tok.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked by another user: %v", err)
	}
	if _, err := st.UserByAPIToken(b.ctx, hash[:]); err != nil {
		t.Fatalf("the token stopped working after another user's revoke: %v", err)
	}
	if err := st.RevokeAPIToken(b.ctx, b.owner.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UserByAPIToken(b.ctx, hash[:]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a revoked token still works: %v", err)
	}
	// A disabled user's token does not authenticate.
	hash2 := sha256.Sum256([]byte("rk_other"))
	if _, err := st.CreateAPIToken(b.ctx, b.other.ID, "x", "rk_othe", hash2[:]); err != nil {
		t.Fatal(err)
	}
	if err := st.SetUserDisabled(b.ctx, b.other.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UserByAPIToken(b.ctx, hash2[:]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a disabled user's token still works: %v", err)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *testBundle) { return setupStore(t) }
	st, b := setup(t)
	live := store.Session{ID: []byte("live"), UserID: b.owner.ID, Data: []byte("one"), IP: "192.0.2.1", UserAgent: "test", ExpiresAt: time.Now().Add(time.Hour)}
	expired := store.Session{ID: []byte("expired"), UserID: b.owner.ID, ExpiresAt: time.Now().Add(-time.Minute)}
	for _, s := range []store.Session{live, expired} {
		if err := st.SaveSession(b.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	live.Data = []byte("two")
	if err := st.SaveSession(b.ctx, live); err != nil {
		t.Fatal(err)
	}
	got, err := st.LiveSession(b.ctx, live.ID)
	if err != nil || string(got.Data) != "two" || got.User.Email != b.owner.Email || got.IP != "192.0.2.1" {
		t.Fatalf("live session: %+v %v", got, err)
	}
	if _, err := st.LiveSession(b.ctx, expired.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an expired session is live: %v", err)
	}
	if n, err := st.CountUserSessions(b.ctx, b.owner.ID); err != nil || n != 1 {
		t.Errorf("live sessions: %d %v", n, err)
	}
	if n, err := st.DeleteExpiredSessions(b.ctx); err != nil || n != 1 {
		t.Errorf("expired sessions deleted: %d %v", n, err)
	}
	if err := st.DeleteSession(b.ctx, live.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LiveSession(b.ctx, live.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted session is live: %v", err)
	}
}

func TestAgents(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *testBundle) { return setupStore(t) }
	st, b := setup(t)
	reg := store.AgentRegistration{Name: "gpu-1", Host: "node-a", Version: "v1", ProtocolVersion: jobs.ProtocolVersion,
		Runtimes: []string{"vllm", "sim"}, Profile: store.HardwareProfile{Slug: "h100-80gb-x1", GPUName: "H100", GPUCount: 1, GPUMemoryBytes: 80 << 30}}
	a, err := st.RegisterAgent(b.ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetAgentDrained(b.ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	// The same name again is the same agent; the drain outlives the restart.
	reg.Host, reg.Version = "node-b", "v2"
	again, err := st.RegisterAgent(b.ctx, reg)
	if err != nil || again.ID != a.ID || again.Host != "node-b" || again.Version != "v2" || !again.Drained {
		t.Fatalf("re-registered: %+v %v", again, err)
	}
	if err := st.SetAgentOffline(b.ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	beat, err := st.AgentHeartbeat(b.ctx, a.ID)
	if err != nil || beat.ID != a.ID {
		t.Fatalf("heartbeat: %+v %v", beat, err)
	}
	if _, err := st.AgentHeartbeat(b.ctx, a.ID+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("heartbeat of a missing agent: %v", err)
	}
	agents, err := st.ListAgents(b.ctx)
	if err != nil || len(agents) != 1 || agents[0].Profile != "h100-80gb-x1" {
		t.Fatalf("list: %+v %v", agents, err)
	}
	price := 2.5
	if err := st.SetHardwarePrice(b.ctx, "h100-80gb-x1", &price); err != nil {
		t.Fatal(err)
	}
	hp, err := st.HardwareProfileBySlug(b.ctx, "h100-80gb-x1")
	if err != nil || hp.GPUCount != 1 || hp.PricePerHour == nil || *hp.PricePerHour != 2.5 {
		t.Fatalf("profile: %+v %v", hp, err)
	}
	// A new registration does not touch the administrators' price.
	if _, err := st.RegisterAgent(b.ctx, reg); err != nil {
		t.Fatal(err)
	}
	if hp, _ := st.HardwareProfileBySlug(b.ctx, "h100-80gb-x1"); hp.PricePerHour == nil || *hp.PricePerHour != 2.5 {
		t.Errorf("price after a registration: %+v", hp)
	}
	// Serving counts only live agents that are not drained.
	if n, err := st.CountServingAgents(b.ctx, "h100-80gb-x1", "vllm", jobs.ProtocolVersion, time.Minute); err != nil || n != 0 {
		t.Errorf("drained agent serving: %d %v", n, err)
	}
	if err := st.SetAgentDrained(b.ctx, a.ID, false); err != nil {
		t.Fatal(err)
	}
	if n, err := st.CountServingAgents(b.ctx, "h100-80gb-x1", "vllm", jobs.ProtocolVersion, time.Minute); err != nil || n != 1 {
		t.Errorf("serving agents: %d %v", n, err)
	}
	if n, _ := st.CountServingAgents(b.ctx, "h100-80gb-x1", "tgi", jobs.ProtocolVersion, time.Minute); n != 0 {
		t.Errorf("an agent serves a runtime it does not have: %d", n)
	}
}

func TestDatasets(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *testBundle) { return setupStore(t) }

	t.Run("CreateAndVisibility", func(t *testing.T) {
		t.Parallel()
		st, b := setup(t)
		private := createDataset(t, st, b.owner.ID, "private", "private", 3)
		shared := createDataset(t, st, b.owner.ID, "shared", "shared", 2)

		d, err := st.DatasetByID(b.ctx, b.ownerV, private)
		if err != nil || d.Name != "private" || d.ItemCount != 3 || d.Format != "simple" || d.OwnerEmail != b.owner.Email || d.DefaultScorer != "exact" {
			t.Fatalf("owner reads: %+v %v", d, err)
		}
		if _, err := st.DatasetByID(b.ctx, b.otherV, private); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another user reads a private dataset: %v", err)
		}
		if _, err := st.DatasetByID(b.ctx, b.adminV, private); err != nil {
			t.Errorf("an admin cannot read a private dataset: %v", err)
		}
		if _, err := st.DatasetByID(b.ctx, b.otherV, shared); err != nil {
			t.Errorf("another user cannot read a shared dataset: %v", err)
		}
		names := func(v store.Viewer) []string {
			ds, err := st.ListDatasets(b.ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, d := range ds {
				out = append(out, d.Name)
			}
			return out
		}
		if got := fmt.Sprint(names(b.ownerV)); got != "[shared private]" {
			t.Errorf("owner's list: %s", got)
		}
		if got := fmt.Sprint(names(b.otherV)); got != "[shared]" {
			t.Errorf("other's list: %s", got)
		}
		items, err := st.DatasetItems(b.ctx, private, 0, 10)
		if err != nil || len(items) != 2 || items[0].Idx != 1 || items[0].CustomID != "item-1" || string(items[1].Reference) != `"a2"` {
			t.Fatalf("items after 0: %+v %v", items, err)
		}
		same, err := st.DatasetsBySHA256(b.ctx, b.otherV, fmt.Sprintf("%x", sha256.Sum256([]byte("private"))))
		if err != nil || len(same) != 0 {
			t.Errorf("another user finds a private dataset by its hash: %+v %v", same, err)
		}
		if d, err := st.DatasetByName(b.ctx, b.otherV, "shared"); err != nil || d.ID != shared {
			t.Errorf("by name: %+v %v", d, err)
		}
	})

	t.Run("DeleteHardAndSoft", func(t *testing.T) {
		t.Parallel()
		st, b := setup(t)
		unused := createDataset(t, st, b.owner.ID, "unused", "shared", 2)
		if _, err := st.DeleteDataset(b.ctx, b.otherV, unused); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another user deleted a shared dataset: %v", err)
		}
		soft, err := st.DeleteDataset(b.ctx, b.ownerV, unused)
		if err != nil || soft {
			t.Fatalf("delete unused: soft %v, %v", soft, err)
		}
		if _, err := st.DatasetByID(b.ctx, b.adminV, unused); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an unused dataset stays after delete: %v", err)
		}

		f := createRun(t, st, b, 2)
		soft, err = st.DeleteDataset(b.ctx, b.ownerV, f.datasetID)
		if err != nil || !soft {
			t.Fatalf("delete used: soft %v, %v", soft, err)
		}
		d, err := st.DatasetByID(b.ctx, b.ownerV, f.datasetID)
		if err != nil || d.DeletedAt == nil {
			t.Fatalf("a used dataset after delete: %+v %v", d, err)
		}
		if items, err := st.DatasetItems(b.ctx, f.datasetID, -1, 10); err != nil || len(items) != 2 {
			t.Errorf("a soft-deleted dataset's items: %d %v", len(items), err)
		}
		if ds, _ := st.ListDatasets(b.ctx, b.ownerV); len(ds) != 0 {
			t.Errorf("a deleted dataset is listed: %+v", ds)
		}
		if _, err := st.DatasetByName(b.ctx, b.ownerV, "runs"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted dataset is found by name: %v", err)
		}
		if _, err := st.DeleteDataset(b.ctx, b.ownerV, f.datasetID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted twice: %v", err)
		}
	})

	t.Run("WriteDatasetIsWholeOrNothing", func(t *testing.T) {
		t.Parallel()
		st, b := setup(t)
		boom := errors.New("line 3 is bad")
		items := func(yield func(store.DatasetItem, error) bool) {
			for i := range 2 {
				if !yield(store.DatasetItem{Idx: i, CustomID: fmt.Sprint(i), Request: json.RawMessage(`{}`)}, nil) {
					return
				}
			}
			yield(store.DatasetItem{}, boom)
		}
		totalsRan := false
		_, err := st.WriteDataset(b.ctx, store.NewDataset{OwnerID: b.owner.ID, Name: "half", Format: "simple", Visibility: "private"},
			items, func(*store.Queries, int64) (store.DatasetTotals, error) {
				totalsRan = true
				return store.DatasetTotals{Name: "half", Visibility: "private"}, nil
			})
		// The source's own error comes back, not PostgreSQL's answer to
		// the aborted COPY: the caller's line and field survive.
		if err != boom {
			t.Fatalf("write: %v, want the source's error itself", err)
		}
		if totalsRan {
			t.Error("the totals ran after the items failed")
		}
		refused := errors.New("a duplicate")
		_, err = st.WriteDataset(b.ctx, store.NewDataset{OwnerID: b.owner.ID, Name: "refused", Format: "simple", Visibility: "private"},
			store.ItemsFrom([]store.DatasetItem{{CustomID: "a", Request: json.RawMessage(`{}`)}}),
			func(*store.Queries, int64) (store.DatasetTotals, error) { return store.DatasetTotals{}, refused })
		if !errors.Is(err, refused) {
			t.Fatalf("write: %v, want the totals' error", err)
		}
		if ds, _ := st.ListDatasets(b.ctx, b.adminV); len(ds) != 0 {
			t.Errorf("failed writes left %d datasets", len(ds))
		}
		var rows int
		if err := st.Pool().QueryRow(b.ctx, `SELECT count(*) FROM dataset_items`).Scan(&rows); err != nil || rows != 0 {
			t.Errorf("failed writes left %d items (%v)", rows, err)
		}
		// On the pool's querier it would not be one transaction.
		if _, err := st.Queries.WriteDataset(b.ctx, store.NewDataset{OwnerID: b.owner.ID}, store.ItemsFrom(nil),
			func(*store.Queries, int64) (store.DatasetTotals, error) { return store.DatasetTotals{}, nil }); err == nil {
			t.Error("WriteDataset ran outside a transaction")
		}
	})

	t.Run("WriteDatasetCountsWhatItCopied", func(t *testing.T) {
		t.Parallel()
		st, b := setup(t)
		items := []store.DatasetItem{{Idx: 0, CustomID: "a", Request: json.RawMessage(`{}`), Category: "x"},
			{Idx: 1, CustomID: "b", Request: json.RawMessage(`{}`), Reference: json.RawMessage(`"r"`), Shot: json.RawMessage(`{"q":"?"}`)}}
		id, err := st.WriteDataset(b.ctx, store.NewDataset{OwnerID: b.owner.ID, Name: "w", Format: "pending", Visibility: "private"},
			store.ItemsFrom(items), func(*store.Queries, int64) (store.DatasetTotals, error) {
				return store.DatasetTotals{Name: "two", Visibility: "shared", Format: "simple", Generator: json.RawMessage(`{"seed":1}`)}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := st.DatasetByID(b.ctx, b.adminV, id)
		if err != nil || ds.ItemCount != 2 || ds.Name != "two" || ds.Visibility != "shared" || ds.Format != "simple" {
			t.Fatalf("dataset %+v %v", ds, err)
		}
		got, err := st.DatasetItems(b.ctx, id, -1, 10)
		if err != nil || len(got) != 2 || got[0].Category != "x" || got[0].Reference != nil || string(got[1].Reference) != `"r"` {
			t.Fatalf("items %+v %v", got, err)
		}
		if gen, err := st.DatasetGenerator(b.ctx, b.adminV, id); err != nil || string(gen) != `{"seed": 1}` {
			t.Errorf("generator %s %v", gen, err)
		}
	})
}

func TestBenchmarks(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *testBundle) { return setupStore(t) }
	st, b := setup(t)
	f := createRun(t, st, b, 3)

	bm, err := st.BenchmarkByID(b.ctx, b.ownerV, f.benchmarkID)
	if err != nil || bm.Name != "bench" || bm.DatasetName != "runs" || len(bm.Runs) != 1 || !bm.Active() {
		t.Fatalf("by id: %+v %v", bm, err)
	}
	r := bm.Runs[0]
	if r.ID != f.runID || r.State != "queued" || r.Total != 3 || r.RiverJobID == nil || *r.RiverJobID != f.jobID || r.AgentID != nil {
		t.Fatalf("run: %+v", r)
	}
	if _, err := st.BenchmarkByID(b.ctx, b.otherV, f.benchmarkID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another user reads the benchmark: %v", err)
	}
	if _, err := st.BenchmarkByID(b.ctx, b.adminV, f.benchmarkID); err != nil {
		t.Errorf("an admin cannot read the benchmark: %v", err)
	}
	list, err := st.ListBenchmarks(b.ctx, b.ownerV)
	if err != nil || len(list) != 1 || list[0].ID != f.benchmarkID || list[0].Runs != 1 || list[0].Active != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list, _ := st.ListBenchmarks(b.ctx, b.otherV); len(list) != 0 {
		t.Errorf("another user lists %d benchmarks", len(list))
	}
	active, err := st.ActiveRuns(b.ctx, b.ownerV)
	if err != nil || len(active) != 1 || active[0].BenchmarkName != "bench" {
		t.Fatalf("active runs: %+v %v", active, err)
	}
	manifest, ds, err := st.BenchmarkManifest(b.ctx, f.benchmarkID)
	if err != nil || ds != f.datasetID || string(manifest) != `{"scorer": "exact"}` {
		t.Errorf("manifest: %s %d %v", manifest, ds, err)
	}
	if err := st.SetRunCancelled(b.ctx, f.runID); err != nil {
		t.Fatal(err)
	}
	bm, _ = st.BenchmarkByID(b.ctx, b.ownerV, f.benchmarkID)
	if bm.Active() || bm.Runs[0].State != "cancelled" {
		t.Errorf("after cancel: %+v", bm.Runs[0])
	}
}

// A run's lease: the fence moves on at every claim, and writes under an
// older fence change nothing.
func TestRunLease(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *testBundle, runFixture) {
		st, b := setupStore(t)
		return st, b, createRun(t, st, b, 4)
	}

	t.Run("ClaimWriteFinish", func(t *testing.T) {
		t.Parallel()
		st, b, f := setup(t)
		if _, err := st.ClaimRun(b.ctx, f.runID, f.agent.ID, f.jobID+1, "sim"); !errors.Is(err, store.ErrStaleJob) {
			t.Fatalf("claim with another job: %v", err)
		}
		c, err := st.ClaimRun(b.ctx, f.runID, f.agent.ID, f.jobID, "sim")
		if err != nil || c.Resumed || c.Total != 4 || c.DatasetID != f.datasetID || c.Fence < 1 {
			t.Fatalf("claim: %+v %v", c, err)
		}
		n, err := st.WriteResults(b.ctx, c.Lease, []store.ResultRecord{okResult(0, 5), okResult(1, 7)})
		if err != nil || n != 2 {
			t.Fatalf("write: %d %v", n, err)
		}
		failed := okResult(2, 0)
		failed.Status, failed.ErrorClass, failed.Error, failed.ContentEvents = jobs.StatusError, jobs.ErrHTTP5xx, "boom", 0
		// One new row and one already stored: only the new one counts.
		if n, err := st.WriteResults(b.ctx, c.Lease, []store.ResultRecord{okResult(1, 7), failed}); err != nil || n != 1 {
			t.Fatalf("rewrite: %d %v", n, err)
		}
		bm, _ := st.BenchmarkByID(b.ctx, b.ownerV, f.benchmarkID)
		if r := bm.Runs[0]; r.State != "running" || r.Completed != 3 || r.Errors != 1 || r.OutputTokens != 12 || r.AgentID == nil || *r.AgentID != f.agent.ID {
			t.Fatalf("counters: %+v", r)
		}
		pending, err := st.PendingItems(b.ctx, f.runID, f.datasetID, 4)
		if err != nil || len(pending) != 1 || pending[0].Idx != 3 || pending[0].CustomID != "item-3" {
			t.Fatalf("pending: %+v %v", pending, err)
		}
		answered, err := st.AnsweredItems(b.ctx, f.runID, f.datasetID, 4)
		if err != nil || len(answered) != 3 || !answered[0].OK || answered[0].Output != "a0" || answered[2].OK {
			t.Fatalf("answered: %+v %v", answered, err)
		}
		eta := 90 * time.Second
		if err := st.UpdateProgress(b.ctx, c.Lease, store.Progress{Throughput: 12.5, RequestsPerS: 2, ETA: &eta}, store.Sample{At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		bm, _ = st.BenchmarkByID(b.ctx, b.ownerV, f.benchmarkID)
		if r := bm.Runs[0]; r.Throughput != 12.5 || r.ETASeconds == nil || *r.ETASeconds != 90 {
			t.Fatalf("progress: %+v", r)
		}
		if err := st.FinishRun(b.ctx, c.Lease, store.Finish{State: "completed", StoppedBy: "done", Throughput: 11}); err != nil {
			t.Fatal(err)
		}
		bm, _ = st.BenchmarkByID(b.ctx, b.ownerV, f.benchmarkID)
		if r := bm.Runs[0]; r.State != "completed" || r.ETASeconds != nil || r.FinishedAt == nil || r.Throughput != 11 {
			t.Fatalf("finished: %+v", r)
		}
		events, err := st.RunEvents(b.ctx, f.runID)
		if err != nil || len(events) != 2 || events[0].Kind != "started" || events[1].Kind != "completed" || events[0].AgentName != f.agent.Name {
			t.Fatalf("events: %+v %v", events, err)
		}
	})

	t.Run("StaleLeaseIsRefused", func(t *testing.T) {
		t.Parallel()
		st, b, f := setup(t)
		old, err := st.ClaimRun(b.ctx, f.runID, f.agent.ID, f.jobID, "sim")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.WriteResults(b.ctx, old.Lease, []store.ResultRecord{okResult(0, 5)}); err != nil {
			t.Fatal(err)
		}
		// The agent hands the run back (stopping); whoever claims it next
		// resumes under a newer fence.
		if err := st.HandBackRun(b.ctx, old.Lease, 3*time.Second, "agent stopping"); err != nil {
			t.Fatal(err)
		}
		if err := st.HandBackRun(b.ctx, old.Lease, time.Second, "again"); !errors.Is(err, store.ErrFenced) {
			t.Errorf("a second hand-back: %v", err)
		}
		cur, err := st.ClaimRun(b.ctx, f.runID, f.agent.ID, f.jobID, "sim")
		if err != nil || !cur.Resumed || cur.Completed != 1 || cur.Fence <= old.Fence || cur.Measured != 3*time.Second {
			t.Fatalf("resume: %+v %v", cur, err)
		}
		if _, err := st.WriteResults(b.ctx, old.Lease, []store.ResultRecord{okResult(1, 5), okResult(2, 5)}); !errors.Is(err, store.ErrFenced) {
			t.Errorf("write under the stale lease: %v", err)
		}
		if err := st.UpdateProgress(b.ctx, old.Lease, store.Progress{Throughput: 999}, store.Sample{At: time.Now()}); !errors.Is(err, store.ErrFenced) {
			t.Errorf("progress under the stale lease: %v", err)
		}
		if err := st.FinishRun(b.ctx, old.Lease, store.Finish{State: "failed", Error: "stale"}); !errors.Is(err, store.ErrFenced) {
			t.Errorf("finish under the stale lease: %v", err)
		}
		bm, _ := st.BenchmarkByID(b.ctx, b.ownerV, f.benchmarkID)
		if r := bm.Runs[0]; r.State != "running" || r.Completed != 1 || r.Throughput == 999 || r.Error != "" {
			t.Fatalf("the stale lease changed the run: %+v", r)
		}
		if answered, _ := st.AnsweredItems(b.ctx, f.runID, f.datasetID, 4); len(answered) != 1 {
			t.Errorf("the stale lease stored results: %d answered", len(answered))
		}
		// The current holder writes.
		if n, err := st.WriteResults(b.ctx, cur.Lease, []store.ResultRecord{okResult(1, 5)}); err != nil || n != 1 {
			t.Errorf("current lease: %d %v", n, err)
		}
	})

	t.Run("UserCancelStays", func(t *testing.T) {
		t.Parallel()
		st, b, f := setup(t)
		c, err := st.ClaimRun(b.ctx, f.runID, f.agent.ID, f.jobID, "sim")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetRunCancelled(b.ctx, f.runID); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(b.ctx, c.Lease, store.Finish{State: "completed"}); err != nil {
			t.Fatal(err)
		}
		bm, _ := st.BenchmarkByID(b.ctx, b.ownerV, f.benchmarkID)
		if bm.Runs[0].State != "cancelled" {
			t.Errorf("a cancelled run finished as %s", bm.Runs[0].State)
		}
		if _, err := st.ClaimRun(b.ctx, f.runID, f.agent.ID, f.jobID, "sim"); !errors.Is(err, store.ErrStaleJob) {
			t.Errorf("claim of a cancelled run: %v", err)
		}
	})
}

func TestScores(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *testBundle, runFixture) {
		st, b := setupStore(t)
		return st, b, createRun(t, st, b, 3)
	}
	st, b, f := setup(t)
	c, err := st.ClaimRun(b.ctx, f.runID, f.agent.ID, f.jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteResults(b.ctx, c.Lease, []store.ResultRecord{okResult(0, 1), okResult(1, 1), okResult(2, 1)}); err != nil {
		t.Fatal(err)
	}
	items, err := st.ScoreItems(b.ctx, f.runID)
	if err != nil || len(items) != 3 || items[1].Idx != 1 || items[1].Output != "a1" || string(items[1].Reference) != `"a1"` {
		t.Fatalf("score items: %+v %v", items, err)
	}
	manifest, dataset, err := st.RunScorer(b.ctx, f.runID)
	if err != nil || manifest != "exact" || dataset != "exact" {
		t.Fatalf("scorer: %q %q %v", manifest, dataset, err)
	}
	one, zero, mean, lo, hi := 1.0, 0.0, 0.5, 0.0, 1.0
	q := store.RunQuality{Scorer: "exact", Scored: 2, Mean: &mean, Low: &lo, High: &hi}
	if err := st.SaveScores(b.ctx, f.runID, []int32{0, 1, 2}, []int32{0, 0, 0}, []*float64{&one, &zero, nil}, q); err != nil {
		t.Fatal(err)
	}
	var scores []*float64
	rows, err := st.Pool().Query(b.ctx, `SELECT score FROM results WHERE run_id = $1 ORDER BY idx`, f.runID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s *float64
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		scores = append(scores, s)
	}
	if len(scores) != 3 || scores[0] == nil || *scores[0] != 1 || scores[1] == nil || *scores[1] != 0 || scores[2] != nil {
		t.Fatalf("scores: %v", scores)
	}
	bm, _ := st.BenchmarkByID(b.ctx, b.ownerV, f.benchmarkID)
	if r := bm.Runs[0]; r.Quality == nil || *r.Quality != 0.5 || r.Scored != 2 || r.Scorer != "exact" {
		t.Fatalf("run quality: %+v", r)
	}
}
