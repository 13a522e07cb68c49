package jobs_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/jobs"
)

// engineTable is the allow-list as docs/benchmarks.md#engine-settings
// shows it, one row per runtime and setting.
func engineTable() string {
	var b strings.Builder
	b.WriteString("| Runtime | Setting | Type | Range or values | Becomes |\n|---|---|---|---|---|\n")
	for _, p := range jobs.EngineParams() {
		values := strings.Join(p.Choices, ", ")
		switch p.Kind {
		case jobs.EngineInt, jobs.EngineFloat:
			values = strconv.FormatFloat(p.Min, 'g', -1, 64) + " to " + strconv.FormatFloat(p.Max, 'g', -1, 64)
		case jobs.EngineBool:
			values = "true, false"
		}
		becomes := "`" + p.Flag + "=VALUE`"
		switch {
		case p.Env != "":
			becomes = "`" + p.Env + "=VALUE` (environment)"
		case p.Kind == jobs.EngineBool:
			becomes = "`" + p.Flag + "` / `" + p.FlagFalse + "`"
		case p.Separate:
			becomes = "`" + p.Flag + " VALUE`"
		}
		if p.GPUs {
			becomes += "; at most the hardware's GPUs"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s |\n", p.Runtime, p.Name, p.Kind, values, becomes)
	}
	return b.String()
}

// TestEngineTableIsDocumented: the table in docs/benchmarks.md is the
// allow-list, row for row (RUCKUS_WRITE_ENGINE_TABLE=1 prints it).
func TestEngineTableIsDocumented(t *testing.T) {
	t.Parallel()
	want := engineTable()
	if os.Getenv("RUCKUS_WRITE_ENGINE_TABLE") != "" {
		fmt.Print(want)
	}
	doc, err := os.ReadFile("../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/benchmarks.md#engine-settings does not hold the allow-list; it should read:\n%s", want)
	}
}
