package backup_test

import (
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/backup"
)

// Roles finds the grantees of the lines pg_dump writes, and nothing in
// function bodies or comments.
func TestRolesAreTheDumpsGrantees(t *testing.T) {
	t.Parallel()
	sql := `
GRANT SELECT ON TABLE public.runs TO ruckus_agent;
GRANT SELECT(slug,gpu_name) ON TABLE public.hardware_profiles TO ruckus_agent;
REVOKE ALL ON FUNCTION public.ruckus_agent_id() FROM PUBLIC;
GRANT ALL ON FUNCTION public.f() TO "Server Role" WITH GRANT OPTION;
CREATE POLICY agent_runs ON public.runs FOR SELECT TO ruckus_agent, "we""ird" USING ((agent_id = public.ruckus_agent_id()));
CREATE FUNCTION public.g() RETURNS void AS $$
  GRANT SELECT ON x TO %I;
$$;
-- GRANT SELECT ON t TO commented
`
	if got := strings.Join(backup.Roles([]byte(sql)), "|"); got != `Server Role|ruckus_agent|we"ird` {
		t.Fatalf("roles %q", got)
	}
}

// FuzzRoles: whatever the archive's SQL, Roles does not panic and returns
// names without NUL.
func FuzzRoles(f *testing.F) {
	f.Add("GRANT SELECT ON TABLE t TO a;\nCREATE POLICY p ON t FOR ALL TO \"b\"\"c\", d USING (true);\n")
	f.Add("GRANT x TO \"\";")
	f.Fuzz(func(t *testing.T, sql string) {
		for _, r := range backup.Roles([]byte(sql)) {
			if r == "" || strings.EqualFold(r, "public") || strings.ContainsRune(r, 0) && !strings.Contains(sql, "\x00") {
				t.Fatalf("role %q", r)
			}
		}
	})
}
