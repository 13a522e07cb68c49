package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
)

// composeFile is the part of compose.yaml the test reads.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image string `yaml:"image"`
	Build struct {
		Target string `yaml:"target"`
	} `yaml:"build"`
	Command     []string                  `yaml:"command"`
	DependsOn   map[string]map[string]any `yaml:"depends_on"`
	Volumes     []string                  `yaml:"volumes"`
	Environment map[string]string         `yaml:"environment"`
	SecurityOpt []string                  `yaml:"security_opt"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return f
}

// dockerStages are the FROM … AS name stages of the Dockerfile.
func dockerStages(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages []string
	for _, m := range regexp.MustCompile(`(?mi)^FROM\s+\S+\s+AS\s+(\S+)`).FindAllSubmatch(b, -1) {
		stages = append(stages, string(m[1]))
	}
	return stages
}

// TestComposeFileRunsEverything holds compose.yaml to the whole system:
// the services a user of `docker compose up` needs (the sandbox that
// executes code answers and the seeding of the starter data included),
// build targets that exist, ruckus commands that ruckus accepts,
// dependencies and volumes that are declared, and Compose's own check where
// a Compose is installed (docs/containers.md).
func TestComposeFileRunsEverything(t *testing.T) {
	f := readCompose(t)
	stages := dockerStages(t)
	for _, want := range []string{"postgres", "migrate", "seed", "server", "sandbox", "pgbouncer", "agentd"} {
		if _, ok := f.Services[want]; !ok {
			t.Errorf("compose.yaml has no %q service", want)
		}
	}
	commands := map[string]string{"migrate": "migrate", "seed": "seed", "server": "serve", "sandbox": "sandbox"}
	for name, sub := range commands {
		if s := f.Services[name]; len(s.Command) == 0 || s.Command[0] != sub {
			t.Errorf("service %s runs %v, want `ruckus %s …`", name, s.Command, sub)
		}
	}
	if s := f.Services["server"]; s.DependsOn["seed"]["condition"] != "service_completed_successfully" {
		t.Errorf("the server starts before the starter data is seeded: depends_on %v", s.DependsOn)
	}
	if s := f.Services["sandbox"]; s.Build.Target != "sandbox" || s.Environment["DATABASE_URL"] == "" {
		t.Errorf("sandbox service: target %q, DATABASE_URL %q", s.Build.Target, s.Environment["DATABASE_URL"])
	}
	if s := f.Services["seed"]; s.Environment["RUCKUS_ADMIN_EMAIL"] != f.Services["server"].Environment["RUCKUS_ADMIN_EMAIL"] {
		t.Errorf("seed and server name different first administrators: %q, %q", s.Environment["RUCKUS_ADMIN_EMAIL"], f.Services["server"].Environment["RUCKUS_ADMIN_EMAIL"])
	}
	for name, s := range f.Services {
		checkComposeService(t, f, stages, name, s)
	}
	checkWithCompose(t)
}

// checkComposeService checks one service's references: its build target, its
// dependencies, its named volumes, and — for an image whose entrypoint is
// `ruckus` — that ruckus accepts its command line (asked for --help after
// it, so an unknown command or flag fails).
func checkComposeService(t *testing.T, f composeFile, stages []string, name string, s composeService) {
	t.Helper()
	if s.Image == "" && !slices.Contains(stages, s.Build.Target) {
		t.Errorf("service %s builds target %q, not a stage of the Dockerfile %v", name, s.Build.Target, stages)
	}
	for dep := range s.DependsOn {
		if _, ok := f.Services[dep]; !ok {
			t.Errorf("service %s depends on %q, which is not a service", name, dep)
		}
	}
	for _, v := range s.Volumes {
		vol, _, _ := strings.Cut(v, ":")
		if !strings.HasPrefix(vol, "/") && !strings.HasPrefix(vol, ".") {
			if _, ok := f.Volumes[vol]; !ok {
				t.Errorf("service %s mounts volume %q, which is not declared", name, vol)
			}
		}
	}
	var args []string
	switch s.Build.Target {
	case "server", "sandbox":
		args = s.Command
	case "pgbouncer":
		args = append([]string{"pgbouncer"}, s.Command...)
	default:
		return
	}
	args = append(slices.Clone(args), "--help")
	for i, a := range args { // compose's ${VAR:-default}: its default
		if m := regexp.MustCompile(`^\$\{[A-Z_]+:-(.*)\}$`).FindStringSubmatch(a); m != nil {
			args[i] = m[1]
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Errorf("service %s: `ruckus %s` exits %d: %s", name, strings.Join(args, " "), code, errb.String())
	}
}

// checkWithCompose runs Compose's own `config -q` over the file where a
// Compose is installed (.ci/ensure-compose installs Debian's for make test).
func checkWithCompose(t *testing.T) {
	t.Helper()
	var cmd *exec.Cmd
	switch {
	case exec.Command("docker", "compose", "version").Run() == nil:
		cmd = exec.Command("docker", "compose", "-f", "../../compose.yaml", "config", "-q")
	default:
		path, err := exec.LookPath("docker-compose")
		if err != nil {
			t.Log("no Compose installed (.ci/ensure-compose): compose.yaml checked by its structure only")
			return
		}
		cmd = exec.Command(path, "-f", "../../compose.yaml", "config", "-q")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

// TestSeedOnANewDatabaseMakesTheAdministrator is compose.yaml's order:
// `ruckus seed` runs before the server first starts, so on a database with
// no administrator it makes the one from RUCKUS_ADMIN_* (as serve would) and
// gives it the starter datasets; the server then finds it and makes none.
func TestSeedOnANewDatabaseMakesTheAdministrator(t *testing.T) {
	pool := pgtest.NewDB(t)
	t.Setenv("DATABASE_URL", pgtest.URL(t, pool))
	t.Setenv("RUCKUS_PASSWORD_COST", "4")
	t.Setenv("RUCKUS_ADMIN_EMAIL", "ops@example.com")
	t.Setenv("RUCKUS_ADMIN_PASSWORD", "")
	code, out, errOut := runCLI(t, "seed")
	if code != 0 || !strings.Contains(out, "Created the first administrator") || !strings.Contains(out, "ops@example.com") ||
		!strings.Contains(out, "seeded starter dataset") {
		t.Fatalf("seed on a new database: %d %q %q", code, out, errOut)
	}
	ctx := context.Background()
	st := store.New(pool)
	admin, err := st.FirstAdmin(ctx)
	if err != nil || admin.Email != "ops@example.com" {
		t.Fatalf("first administrator %+v %v, want ops@example.com", admin, err)
	}
	if n, err := st.CountStarterDatasets(ctx); err != nil || n != len(starter.All) {
		t.Fatalf("starter datasets %d %v, want %d", n, err, len(starter.All))
	}
	if code, out, _ := runCLI(t, "seed"); code != 0 || out != "" {
		t.Fatalf("second seed: %d %q, want no change and no second administrator", code, out)
	}
}
