package handlers_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

func TestAdminAgentsAndHardware(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	a := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "gpu-1", Host: "node1", Version: "v1", Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "h100-80gb-x2", GPUName: "NVIDIA H100 80GB HBM3", GPUCount: 2, GPUMemoryBytes: 80e9, CPUCores: 32}})
	c := e.client()
	c.signIn("root@example.com", "correct horse")

	page := c.get("/admin/agents")
	row := `[data-testid="agent-gpu-1"]`
	if page.text(row+` [data-testid="agent-state"]`) != "online" || !strings.Contains(page.text(row), "h100-80gb-x2") {
		t.Fatalf("agents page: %.400s", page.text(row))
	}
	if got := page.text(row + ` td:nth-child(8)`); got != "idle" {
		t.Fatalf("current run of an idle agent: %q", got)
	}
	if res := c.post("/admin/agents/"+itoa(a.ID)+"/drain", nil); res.status != 303 {
		t.Fatalf("drain: %d", res.status)
	}
	if got := c.get("/admin/agents").text(row + ` [data-testid="agent-state"]`); got != "drained" {
		t.Fatalf("after drain: %q", got)
	}
	c.post("/admin/agents/"+itoa(a.ID)+"/deactivate", nil)
	if got := c.get("/admin/agents").text(row + ` [data-testid="agent-state"]`); got != "deactivated" {
		t.Fatalf("after deactivate: %q", got)
	}
	// The agent learns it at its next heartbeat.
	hb, err := e.store.AgentHeartbeat(ctx, a.ID)
	if err != nil || hb.DeactivatedAt == nil || !hb.Drained {
		t.Fatalf("heartbeat after deactivate: %+v %v", hb, err)
	}
	c.post("/admin/agents/"+itoa(a.ID)+"/reactivate", nil)
	c.post("/admin/agents/"+itoa(a.ID)+"/undrain", nil)
	if got := c.get("/admin/agents").text(row + ` [data-testid="agent-state"]`); got != "online" {
		t.Fatalf("after reactivate and undrain: %q", got)
	}
	if res := c.post("/admin/agents/999999/drain", nil); res.status != 404 {
		t.Fatalf("drain unknown agent: %d", res.status)
	}

	hw := c.get("/admin/hardware")
	hrow := `[data-testid="hardware-h100-80gb-x2"]`
	if !strings.Contains(hw.text(hrow), "2 × NVIDIA H100 80GB HBM3") || !strings.Contains(hw.text(hrow), "1 (1)") {
		t.Fatalf("hardware page: %q", hw.text(hrow))
	}
	if res := c.post("/admin/hardware/h100-80gb-x2/price", url.Values{"price": {"cheap"}}); res.status != 422 || res.text(`[data-testid="error-h100-80gb-x2"]`) == "" {
		t.Fatalf("bad price: %d", res.status)
	}
	if res := c.post("/admin/hardware/h100-80gb-x2/price", url.Values{"price": {"4.98"}}); res.status != 303 {
		t.Fatalf("set price: %d", res.status)
	}
	hw = c.get("/admin/hardware")
	if v, _ := hw.doc.Find(hrow + ` input[name="price"]`).Attr("value"); v != "4.98" {
		t.Fatalf("price shown = %q", v)
	}
	// Re-registering keeps the administrators' price.
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "gpu-2", Profile: store.HardwareProfile{Slug: "h100-80gb-x2", GPUName: "NVIDIA H100 80GB HBM3", GPUCount: 2, GPUMemoryBytes: 80e9}, Runtimes: []string{}})
	hs, err := e.store.ListHardwareProfiles(ctx, 15e9)
	if err != nil || len(hs) != 1 || hs[0].PricePerHour == nil || *hs[0].PricePerHour != 4.98 || hs[0].Agents != 2 {
		t.Fatalf("profiles after a second agent: %+v %v", hs, err)
	}
	if res := c.post("/admin/hardware/no-such/price", url.Values{"price": {"1"}}); res.status != 404 {
		t.Fatalf("unknown profile: %d", res.status)
	}

	// An agent of another protocol version is shown as incompatible.
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "old-1", ProtocolVersion: 99, Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	if got := c.get("/admin/agents").text(`[data-testid="agent-old-1"] [data-testid="agent-state"]`); got != "incompatible" {
		t.Fatalf("agent of protocol 99: %q", got)
	}

	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	u := e.client()
	u.signIn("ada@example.com", "correct horse")
	for _, p := range []string{"/admin/agents", "/admin/hardware"} {
		if res := u.get(p); res.status != 403 {
			t.Errorf("user on %s: %d", p, res.status)
		}
	}
}

// What an agent serves is granted by the server: an agent with a role of
// its own and no grant shows what it declares beside what it serves
// (nothing), with an Approve button; approving grants the declaration.
func TestAdminApprovesWhatAnAgentDeclares(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	pgtest.AgentLoginGranted(t, e.store.Pool(), "gpu-new", store.AgentGrant{})
	a := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "gpu-new", Host: "node2", Version: "v1", Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "l4-24gb-x1", GPUName: "NVIDIA L4", GPUCount: 1, GPUMemoryBytes: 24e9, CPUCores: 8}})
	c := e.client()
	c.signIn("root@example.com", "correct horse")
	row := `[data-testid="agent-gpu-new"]`
	page := c.get("/admin/agents")
	if got := page.text(row + ` [data-testid="agent-declared"]`); !strings.Contains(got, "l4-24gb-x1") || !strings.Contains(got, "vllm") {
		t.Fatalf("declared: %q", got)
	}
	if got := page.text(row+` [data-testid="agent-granted-profile"]`) + page.text(row+` [data-testid="agent-granted-runtimes"]`); got != "" {
		t.Fatalf("a new agent serves %q before approval", got)
	}
	if page.text(row+` [data-testid="approve-gpu-new"]`) == "" {
		t.Fatalf("no approve button: %.400s", page.text(row))
	}
	if res := c.post("/admin/agents/"+itoa(a.ID)+"/approve", nil); res.status != 303 {
		t.Fatalf("approve: %d", res.status)
	}
	page = c.get("/admin/agents")
	if got := page.text(row + ` [data-testid="agent-granted-profile"]`); got != "l4-24gb-x1" {
		t.Fatalf("granted profile after approval: %q", got)
	}
	if got := page.text(row + ` [data-testid="agent-granted-runtimes"]`); got != "vllm" {
		t.Fatalf("granted runtimes after approval: %q", got)
	}
	if page.text(row+` [data-testid="approve-gpu-new"]`) != "" || page.text(row+` [data-testid="agent-declared"]`) != "" {
		t.Fatalf("still pending after approval: %.400s", page.text(row))
	}
	if res := c.post("/admin/agents/999999/approve", nil); res.status != 404 {
		t.Fatalf("approve unknown agent: %d", res.status)
	}
}
