package docs_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// A command block a reader may paste as it is is marked runnable by its
// fence's info string; TestRunnableBlocks runs every such block.
const runnableInfo = "sh runnable"

type block struct {
	page string
	line int
	code string
}

// runnableBlocks reads the runnable blocks of a page from its Markdown,
// in order.
func runnableBlocks(t *testing.T, page string) []block {
	t.Helper()
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	var out []block
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		f, ok := n.(*ast.FencedCodeBlock)
		if !ok || !entering || f.Info == nil {
			return ast.WalkContinue, nil
		}
		info := strings.Join(strings.Fields(string(f.Info.Segment.Value(src))), " ")
		if info != runnableInfo {
			if strings.Contains(info, "runnable") {
				t.Errorf("%s: a block marked %q: write %q", page, info, runnableInfo)
			}
			return ast.WalkContinue, nil
		}
		var code bytes.Buffer
		lines := f.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			code.Write(seg.Value(src))
		}
		line := 1 + bytes.Count(src[:lines.At(0).Start], []byte("\n"))
		out = append(out, block{page: page, line: line, code: code.String()})
		return ast.WalkContinue, nil
	})
	return out
}

// TestGettingStartedHasRunnableBlocks keeps the doc-test honest: the guide
// a newcomer follows first must have blocks the doc-test runs, so a typo
// in the marker cannot make it skip them silently.
func TestGettingStartedHasRunnableBlocks(t *testing.T) {
	if n := len(runnableBlocks(t, "getting-started.md")); n < 4 {
		t.Errorf("getting-started.md has %d runnable blocks, want its command-line walk (4 or more)", n)
	}
}

// TestRunnableBlocks is the doc-test: every block marked runnable on any
// page (getting started, the how-to guides) runs, read from the Markdown
// itself, against a fresh database served as `make run` serves it — a
// `ruckus serve` with the starter datasets and models, and an agentd on
// the simulated runtime. A page's blocks run in order in one bash (set -e,
// pipefail) in a folder of their own, as a reader pastes them into one
// terminal, with what the pages say the reader has set: PATH with
// bin/ruckus and bin/agentd, RUCKUS_URL, RUCKUS_TOKEN (a user's API token)
// and DATABASE_URL. A non-zero exit fails the test with the block's
// output.
func TestRunnableBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and an agent")
	}
	pages, _ := filepath.Glob("*.md")
	var all [][]block
	total := 0
	for _, p := range pages {
		if bs := runnableBlocks(t, p); len(bs) > 0 {
			all = append(all, bs)
			total += len(bs)
		}
	}
	if total == 0 {
		t.Fatal("no runnable blocks")
	}
	env := startRuckus(t)
	ran := 0
	for _, bs := range all {
		t.Run(bs[0].page, func(t *testing.T) {
			var script strings.Builder
			script.WriteString("set -euo pipefail\n")
			for i, b := range bs {
				fmt.Fprintf(&script, "echo '>>> block %d of %s, line %d'\n%s\n", i+1, b.page, b.line, b.code)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			ran += bytes.Count(out, []byte(">>> block "))
			if err != nil {
				t.Fatalf("%v; the output, each block after its >>> line:\n%s", err, out)
			}
		})
	}
	t.Logf("doc-test: ran %d runnable blocks of %d on %d pages", ran, total, len(all))
	if ran != total {
		t.Errorf("ran %d of %d runnable blocks", ran, total)
	}
}

// startRuckus builds both programs, serves a fresh database as make run
// does (migrated, seeded, one agent on the simulated runtime) and returns
// the environment the blocks get.
func startRuckus(t *testing.T) []string {
	t.Helper()
	bin := t.TempDir()
	for _, pkg := range []string{"../cmd/ruckus", "../agentd"} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	pool := pgtest.NewDB(t)
	dbURL := pgtest.URL(t, pool)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := append(os.Environ(), "DATABASE_URL="+dbURL)
	run := func(args ...string) string {
		cmd := exec.Command(filepath.Join(bin, "ruckus"), args...)
		cmd.Env = append(base, "RUCKUS_PASSWORD_COST=4")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ruckus %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	daemon := func(name string, cmd *exec.Cmd) {
		log, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			if t.Failed() {
				b, _ := os.ReadFile(log.Name())
				t.Logf("%s log:\n%s", name, b)
			}
		})
	}
	srv := exec.Command(filepath.Join(bin, "ruckus"), "serve")
	srv.Env = append(base, "RUCKUS_ADDR="+addr, "RUCKUS_PASSWORD_COST=4", "RUCKUS_METRICS_ADDR=off",
		"RUCKUS_ADMIN_EMAIL=admin@example.com", "RUCKUS_ADMIN_PASSWORD=admin-password-1")
	daemon("server", srv)
	url := "http://" + addr
	testkit.WaitWithin(t, 60*time.Second, "the server to be ready", func() bool {
		res, err := http.Get(url + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	run("seed")
	agent := exec.Command(filepath.Join(bin, "agentd"), "run", "--name", "docs-sim", "--runtime", "sim", "--no-gpu", "--heartbeat", "1s", "--progress-interval", "200ms")
	agent.Env = append(os.Environ(), "DATABASE_URL="+pgtest.AgentURL(t, pool, "docs-sim"))
	daemon("agentd", agent)
	st := store.New(pool)
	testkit.WaitWithin(t, 60*time.Second, "the agent to register", func() bool {
		agents, err := st.ListAgents(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range agents {
			if a.Name == "docs-sim" && a.State == store.AgentOnline {
				return true
			}
		}
		return false
	})
	run("user", "create", "--email", "reader@example.com", "--password", "reader-password-1", "--name", "Reader")
	token := run("token", "create", "--email", "reader@example.com", "--name", "docs")
	return []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"RUCKUS_URL=" + url, "RUCKUS_TOKEN=" + token, "DATABASE_URL=" + dbURL,
	}
}
