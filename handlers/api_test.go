package handlers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/store"
)

func TestAPITokenAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	ctx := context.Background()
	live, prefix, hash := auth.NewAPIToken()
	if _, err := e.store.CreateAPIToken(ctx, admin.ID, "live", prefix, hash); err != nil {
		t.Fatal(err)
	}
	revoked, prefix2, hash2 := auth.NewAPIToken()
	rt, err := e.store.CreateAPIToken(ctx, admin.ID, "old", prefix2, hash2)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.RevokeAPIToken(ctx, admin.ID, rt.ID); err != nil {
		t.Fatal(err)
	}

	status, body := apiGet(e, "/api/v1/me", live)
	if status != 200 || body["email"] != "root@example.com" || body["role"] != "admin" {
		t.Fatalf("valid token: %d %v", status, body)
	}
	if status, body := apiGet(e, "/api/v1/users", live); status != 200 || len(body["users"].([]any)) != 1 {
		t.Fatalf("admin list users: %d %v", status, body)
	}
	for name, tok := range map[string]string{"revoked": revoked, "unknown": "rk_nope", "missing": ""} {
		status, body := apiGet(e, "/api/v1/me", tok)
		if status != 401 {
			t.Errorf("%s token: %d, want 401", name, status)
		}
		if msg, _ := body["error"].(string); !strings.Contains(msg, "token") {
			t.Errorf("%s token: error %q does not mention the token", name, msg)
		}
	}
	// A disabled user's tokens stop working.
	if err := e.store.SetUserDisabled(ctx, admin.ID, true); err != nil {
		t.Fatal(err)
	}
	if status, _ := apiGet(e, "/api/v1/me", live); status != 401 {
		t.Errorf("token of a disabled user: %d, want 401", status)
	}
}

func TestAPIUnknownRouteIsJSON404(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(u)
	status, body := apiGet(e, "/api/v1/nothing-here", tok)
	if status != 404 || !strings.Contains(body["error"].(string), "no such endpoint") {
		t.Fatalf("unknown API route: %d %v", status, body)
	}
}
