package dataset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
)

// TestLineErrorsInTheReadersLanguage: an upload's errors keep the English
// text the API answers and read in German on a page, line and field kept;
// a nested phrase (what the line held) is worded in the same language.
func TestLineErrorsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	p := NewParser(strings.NewReader("{\"prompt\":42}\n[1]\n{\"prompt\":\"a\"}\n{\"prompt\":\"a\"}\n"), DefaultLimits())
	for {
		if _, ok := p.Next(); !ok {
			break
		}
	}
	errs := p.Errors()
	if len(errs) != 2 {
		t.Fatalf("errors = %+v", errs)
	}
	for i, tc := range []struct {
		line      int
		field, en string
		de        string
	}{
		{1, "prompt", "prompt must be a string, not a number", "prompt muss ein Text sein, nicht eine Zahl"},
		{2, "", "the line must be a JSON object, not an array", "die Zeile muss ein JSON-Objekt sein, nicht ein Array"},
	} {
		e := errs[i]
		if e.Line != tc.line || e.Field != tc.field || e.Message != tc.en {
			t.Errorf("error %d = %+v, want line %d field %q %q", i, e, tc.line, tc.field, tc.en)
		}
		if got := e.Text(de); got != tc.de {
			t.Errorf("error %d in German = %q, want %q", i, got, tc.de)
		}
		if got := e.Text(context.Background()); got != tc.en {
			t.Errorf("error %d without a language = %q, want the English text", i, got)
		}
	}
	if le := NewLineError("shots", "dataset_err.shots_whole_number_from", "A", MaxShots); le.Message != fmt.Sprintf("shots must be a whole number from 0 to %d", MaxShots) {
		t.Errorf("NewLineError = %+v", le)
	}
}
