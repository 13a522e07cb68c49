//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/ruckus/ruckus/app/pgtest"
)

// startStoppableAgent is startAgent whose agent the test can stop before
// it ends (stop waits for it to exit).
func startStoppableAgent(t *testing.T, s *server, name string) (profile string, stop func()) {
	t.Helper()
	cmd := exec.Command(agentdBin, "run", "--name", name, "--runtime", "sim", "--no-gpu", "--heartbeat", "1s", "--progress-interval", "200ms")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+pgtest.AgentURL(t, s.Store.Pool(), name))
	logFile, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	must(t, err)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	must(t, cmd.Start())
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("%s log:\n%s", name, b)
		}
	})
	waitUntil(t, 30*time.Second, "agent "+name+" to register", func() (bool, string) {
		agents, err := s.Store.ListAgents(context.Background())
		must(t, err)
		for _, a := range agents {
			if a.Name == name && a.Profile != "" && a.State == "online" {
				profile = a.Profile
				return true, ""
			}
		}
		return false, "not registered"
	})
	return profile, stop
}

// The judge end to end on the simulated runtime: a benchmark scored by
// `scorer: judge` runs two models (one always right, one always wrong);
// each finished run's score job queues a judge run, which a sim agent
// leases and works like any run; its verdicts become the runs' quality on
// their pages. Then a pairwise judging of the two with scripted judge
// answers, both orders: agreeing, inconsistent and unreadable verdicts,
// and the pair's wins, ties and losses on the comparison.
func TestJudgeOnTheSimulatedRuntime(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	a := newAPIClient(t, s)
	ctx := context.Background()
	db := s.Store.Pool()
	for _, m := range []string{"acme/right-1b", "acme/wrong-1b", "acme/judge-8b"} {
		var out struct{}
		a.postJSON("/api/v1/models", map[string]any{"name": m, "params_b": 1, "quantization": "bf16", "context_length": 8192}, http.StatusCreated, &out)
	}
	profile, stop := startStoppableAgent(t, s, "e2e-judge-sim")
	var items strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&items, "{\"id\":\"q%d\",\"prompt\":\"What is %d plus %d?\",\"reference\":\"%d\"}\n", i, i, i, 2*i)
	}
	ds := a.uploadDataset("Sums for the judge", "sums.jsonl", items.String())
	judgeOpts := map[string]any{"model": "acme/judge-8b", "runtime": "sim", "hardware": profile, "rubric": "correctness"}
	var created struct {
		ID   int64 `json:"benchmark_id"`
		Runs []struct {
			ID    int64  `json:"run_id"`
			Model string `json:"model"`
		} `json:"runs"`
	}
	a.postJSON("/api/v1/benchmarks", map[string]any{
		"name": "Judged sums", "dataset": ds,
		"targets": []map[string]string{{"model": "acme/right-1b", "runtime": "sim", "hardware": profile},
			{"model": "acme/wrong-1b", "runtime": "sim", "hardware": profile}},
		"load": map[string]any{"profile": "concurrency", "concurrency": 4}, "sampling": map[string]any{"max_tokens": 64},
		"scorer": "judge", "scorer_options": map[string]any{"judge": judgeOpts},
		"sim": map[string]any{"accuracy": map[string]float64{"acme/right-1b": 1, "acme/wrong-1b": 0}},
	}, http.StatusCreated, &created)
	right, wrong := created.Runs[0].ID, created.Runs[1].ID

	quality := map[int64]float64{}
	waitUntil(t, 2*time.Minute, "both runs judged", func() (bool, string) {
		rows, err := db.Query(ctx, `SELECT r.id, r.quality FROM runs r WHERE r.id = ANY($1) AND r.scorer = 'judge' AND r.quality IS NOT NULL`,
			[]int64{right, wrong})
		must(t, err)
		defer rows.Close()
		for rows.Next() {
			var id int64
			var q float64
			must(t, rows.Scan(&id, &q))
			quality[id] = q
		}
		return len(quality) == 2, fmt.Sprint(quality)
	})
	// The sim judge follows the simulated model: its right answers get
	// 10/10, its wrong ones 1/10.
	if quality[right] != 1 || quality[wrong] != 0 {
		t.Fatalf("judged quality: right %v, wrong %v; want 1 and 0", quality[right], quality[wrong])
	}
	// The judge's runs were leased and measured like any run, and stay out
	// of the benchmark's own runs.
	var judgeRuns, measured int
	must(t, db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE r.state = 'completed' AND r.mode = 'sim' AND r.agent_id IS NOT NULL
			AND r.output_tokens > 0 AND r.throughput > 0 AND r.summary IS NOT NULL)
		FROM judge_runs j JOIN runs r ON r.id = j.run_id WHERE j.run_a = ANY($1)`, []int64{right, wrong}).Scan(&judgeRuns, &measured))
	if judgeRuns != 2 || measured != 2 {
		t.Fatalf("judge runs %d, of which leased, finished and measured %d; want 2 and 2", judgeRuns, measured)
	}
	var benchRuns int
	must(t, db.QueryRow(ctx, `SELECT count(*) FROM runs WHERE benchmark_id = $1`, created.ID).Scan(&benchRuns))
	if benchRuns != 2 {
		t.Errorf("the judged benchmark has %d runs, want its 2", benchRuns)
	}

	page := newPage(t, 1280, 800)
	signIn(t, page, s.URL, adminEmail, adminPassword)
	_, err := page.Goto(fmt.Sprintf("%s/runs/%d", s.URL, right))
	must(t, err)
	must(t, expect(t).Locator(page.GetByTestId("run-quality")).ToContainText("Quality (judge): 1.000"))
	must(t, expect(t).Locator(page.GetByTestId("judgings").GetByTestId("judging-state")).ToHaveText("judged"))
	must(t, page.GetByText("Judge this run with an LLM").Click())
	must(t, expect(t).Locator(page.GetByTestId("judge-form").Locator(`select[name="judge_target"]`)).ToHaveValue(profile+"|sim"))
	screenshot(t, page, "judge-run-page")
	axeCheck(t, page, "judge-run-page", "1280")
	_, err = page.Goto(fmt.Sprintf("%s/runs/%d/items/0", s.URL, wrong))
	must(t, err)
	must(t, expect(t).Locator(page.GetByTestId("item-verdict")).ToHaveText("Rated 1 on 1–10 (score 0.000)"))
	must(t, expect(t).Locator(page.GetByTestId("item-rationale")).ToContainText("does not agree with the reference"))
	screenshot(t, page, "judge-item-page")

	// Pairwise, scripted: with no agent serving, the judging waits; its
	// simulated answers are replaced by the script; an agent then works it.
	stop()
	var started struct {
		ID      int64 `json:"judge_run_id"`
		Prompts int   `json:"prompts"`
	}
	a.postJSON(fmt.Sprintf("/api/v1/runs/%d/judge", right), map[string]any{"judge": map[string]any{
		"model": "acme/judge-8b", "runtime": "sim", "hardware": profile, "rubric": "pairwise"}, "against": wrong}, http.StatusCreated, &started)
	if started.Prompts != 12 {
		t.Fatalf("%d pairwise prompts, want 12 (6 items, both orders)", started.Prompts)
	}
	script := map[string]string{ // by the judged item and order; A is the answer shown first
		"0/ab": "The first is right. [[A]]", "0/ba": "The second is right. [[B]]", // right wins twice
		"1/ab": "[[A]]", "1/ba": "[[A]]", // position bias: inconsistent, a tie
		"2/ab": "▁▁ gibberish", "2/ba": "[[B]]", // unreadable once: no verdict
		"3/ab": "[[C]]", "3/ba": "[[C]]", // tie
		"4/ab": "[[B]]", "4/ba": "[[A]]", // wrong wins twice
		"5/ab": "[[A]]", "5/ba": "[[B]]", // right wins
	}
	tx, err := db.Begin(ctx)
	must(t, err)
	_, err = tx.Exec(ctx, `DELETE FROM sim_answers WHERE run_id = $1`, started.ID)
	must(t, err)
	for key, answer := range script {
		_, err = tx.Exec(ctx, `INSERT INTO sim_answers (run_id, idx, answer) SELECT $1, i.idx, $3 FROM runs r
			JOIN benchmarks b ON b.id = r.benchmark_id JOIN dataset_items i ON i.dataset_id = b.dataset_id
			WHERE r.id = $1 AND i.custom_id = $2`, started.ID, key, answer)
		must(t, err)
	}
	must(t, tx.Commit(ctx))
	startAgent(t, s, "e2e-judge-sim-2")
	waitUntil(t, 2*time.Minute, "the pair judged", func() (bool, string) {
		var state string
		must(t, db.QueryRow(ctx, `SELECT state FROM judge_runs WHERE run_id = $1`, started.ID).Scan(&state))
		return state == "judged", state
	})
	var wins, ties, losses, inconsistent, unparsed int
	must(t, db.QueryRow(ctx, `SELECT wins, ties, losses, inconsistent, unparsed FROM judge_runs WHERE run_id = $1`, started.ID).
		Scan(&wins, &ties, &losses, &inconsistent, &unparsed))
	if wins != 2 || ties != 2 || losses != 1 || inconsistent != 1 || unparsed != 1 {
		t.Fatalf("pair: %d wins, %d ties, %d losses, %d inconsistent, %d unparsed; want 2 2 1 1 1", wins, ties, losses, inconsistent, unparsed)
	}
	_, err = page.Goto(fmt.Sprintf("%s/compare?runs=%d,%d", s.URL, right, wrong))
	must(t, err)
	row := page.GetByTestId(fmt.Sprintf("pair-judging-%d", started.ID))
	must(t, expect(t).Locator(row.GetByTestId("pair-judging-counts")).ToContainText(fmt.Sprintf("run %d: 2 wins · 2 ties · 1 losses", right)))
	must(t, expect(t).Locator(row.GetByTestId("pair-judging-winrate")).ToHaveText(fmt.Sprintf("run %d: 40.0 %% (ties as half: 60.0 %%)", right)))
	must(t, expect(t).Locator(page.GetByTestId("pair-verdict-1")).ToContainText("inconsistent across orders"))
	must(t, expect(t).Locator(page.GetByTestId("pair-verdict-2")).ToContainText("no verdict (unparseable)"))
	screenshot(t, page, "judge-compare")
	axeCheck(t, page, "judge-compare", "1280")

	// The judge's pages fit a phone's width too.
	phone := newPage(t, 390, 844)
	signIn(t, phone, s.URL, adminEmail, adminPassword)
	auditPages(t, phone, s.URL, map[string]string{
		"judge-run":     fmt.Sprintf("/runs/%d", right),
		"judge-item":    fmt.Sprintf("/runs/%d/items/0", wrong),
		"judge-compare": fmt.Sprintf("/compare?runs=%d,%d", right, wrong),
		"judge-itself":  fmt.Sprintf("/runs/%d", started.ID),
	}, "390")

	// The comparison's form starts a pairwise judging from the browser.
	must(t, page.GetByText("Judge two of these runs").Click())
	form := page.GetByTestId("judge-form")
	_, err = form.Locator(`select[name="judge_model"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"acme/judge-8b"}})
	must(t, err)
	_, err = form.Locator(`select[name="rubric"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"pairwise-correctness"}})
	must(t, err)
	must(t, form.GetByTestId("judge-submit").Click())
	must(t, expect(t).Locator(page.GetByTestId("flash")).ToContainText("items of runs"))
	waitUntil(t, 2*time.Minute, "the second pair judged", func() (bool, string) {
		var n int
		must(t, db.QueryRow(ctx, `SELECT count(*) FROM judge_runs WHERE mode = 'pairwise' AND rubric = 'pairwise-correctness' AND state = 'judged'`).Scan(&n))
		return n == 1, fmt.Sprint(n)
	})
	var w2, l2 int
	must(t, db.QueryRow(ctx, `SELECT wins, losses FROM judge_runs WHERE rubric = 'pairwise-correctness'`).Scan(&w2, &l2))
	// The sim judge prefers the answer closer to the reference: the right
	// model's, in both orders.
	if w2 != 6 || l2 != 0 {
		t.Errorf("sim pairwise judge: %d wins, %d losses for the right model; want 6 and 0", w2, l2)
	}
}

// The judge on a real runtime: the tiny random-weight model on Ollama
// judges a run. Its answers are gibberish, so this proves the path: the
// judge's requests are sent, answered and measured like any run's, and
// each verdict is recorded (unparseable, no score) with the raw answer
// kept.
func TestJudgeOnOllama(t *testing.T) {
	ollama, gguf := realRuntime(t)
	ollamaEnv(t, ollama)
	base := startOllama(t, ollama)
	createOllamaModel(t, ollama, base, gguf)
	s := startServer(t)
	a := newAPIClient(t, s)
	profile := startAgent(t, s, "e2e-judge-ollama", "--runtime", "openai", "--endpoint", base, "--serves", "ollama")
	run := a.runTinyBenchmark(profile, "ollama")

	var started struct {
		ID              int64 `json:"judge_run_id"`
		Prompts         int   `json:"prompts"`
		WaitingForAgent bool  `json:"waiting_for_agent"`
	}
	a.postJSON(fmt.Sprintf("/api/v1/runs/%d/judge", run.ID), map[string]any{"judge": map[string]any{
		"model": tinyModel, "runtime": "ollama", "hardware": profile, "rubric": "correctness", "max_tokens": tinyMaxTokens}},
		http.StatusCreated, &started)
	if started.Prompts != tinyItems || started.WaitingForAgent {
		t.Fatalf("judging: %+v, want %d prompts and an agent serving", started, tinyItems)
	}
	ctx := context.Background()
	db := s.Store.Pool()
	waitUntil(t, 3*time.Minute, "the judging to be read", func() (bool, string) {
		var state, runState string
		must(t, db.QueryRow(ctx, `SELECT j.state, r.state FROM judge_runs j JOIN runs r ON r.id = j.run_id WHERE j.run_id = $1`, started.ID).
			Scan(&state, &runState))
		return state != "judging", state + " / judge run " + runState
	})
	// Sent, answered and measured like any run.
	var mode, state string
	var completed, errs int
	var outTokens int64
	var tps float64
	var withTTFT int
	must(t, db.QueryRow(ctx, `SELECT r.mode, r.state, r.completed, r.errors, r.output_tokens, r.throughput,
			(SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'ok' AND x.ttft_ms > 0 AND x.e2e_ms >= x.ttft_ms)
		FROM runs r WHERE r.id = $1`, started.ID).Scan(&mode, &state, &completed, &errs, &outTokens, &tps, &withTTFT))
	if state != "completed" || mode != "gray-box" || completed != tinyItems || errs != 0 || outTokens <= 0 || tps <= 0 || withTTFT != tinyItems {
		t.Fatalf("judge run: %s %s, %d done, %d errors, %d output tokens, %.1f tokens/s, %d with TTFT", state, mode, completed, errs, outTokens, tps, withTTFT)
	}
	// Every verdict recorded with the judge's answer as it came; the
	// unreadable ones without a score.
	rows, err := db.Query(ctx, `SELECT g.verdict, g.score IS NULL, g.raw = x.output, length(x.output)
		FROM judgments g JOIN judge_runs j ON j.run_id = g.judge_run_id JOIN runs r ON r.id = j.run_id
		JOIN benchmarks b ON b.id = r.benchmark_id JOIN dataset_items i ON i.dataset_id = b.dataset_id AND (i.reference->>'idx')::int = g.idx
		JOIN results x ON x.run_id = r.id AND x.idx = i.idx WHERE g.judge_run_id = $1`, started.ID)
	must(t, err)
	n, unparseable := 0, 0
	for rows.Next() {
		var verdict string
		var noScore, rawKept bool
		var length int
		must(t, rows.Scan(&verdict, &noScore, &rawKept, &length))
		n++
		if !rawKept || length == 0 {
			t.Errorf("a %s verdict without the judge's answer kept", verdict)
		}
		switch verdict {
		case "unparseable":
			unparseable++
			if !noScore {
				t.Error("an unparseable verdict has a score")
			}
		case "rated":
		default:
			t.Errorf("verdict %q", verdict)
		}
	}
	must(t, rows.Err())
	if n != tinyItems || unparseable == 0 {
		t.Fatalf("%d verdicts (%d unparseable), want %d with unparseable ones (random weights)", n, unparseable, tinyItems)
	}
	t.Logf("judge run %d: %d output tokens at %.1f tokens/s; %d of %d verdicts unparseable", started.ID, outTokens, tps, unparseable, n)
}
