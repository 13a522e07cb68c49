package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// TestLoadMessagesKeepTheirEnglishText: the msg tags of the load, sampling
// and SLO fields name catalogue keys; the API still answers the English
// sentences it always did, and a page reads them in German.
func TestLoadMessagesKeepTheirEnglishText(t *testing.T) {
	t.Parallel()
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	temp := 3.0
	for _, tc := range []struct {
		v            any
		path, en, de string
	}{
		{&jobs.LoadProfile{Warmup: -1}, "warmup", "cannot be negative", "darf nicht negativ sein"},
		{&jobs.LoadProfile{MaxRequests: -1}, "max_requests", "cannot be negative (0 means all items)", "darf nicht negativ sein (0 heißt alle Einträge)"},
		{&jobs.Sampling{MaxTokens: 0}, "max_tokens", "between 1 and 1000000 (always set it: some runtimes generate without end otherwise)",
			"zwischen 1 und 1000000 (setzen Sie den Wert immer: manche Laufzeitumgebungen erzeugen sonst ohne Ende)"},
		{&jobs.Sampling{MaxTokens: 1, Temperature: &temp}, "temperature", "between 0 and 2", "zwischen 0 und 2"},
	} {
		errs := valid.Default().Struct(tc.v)
		if got := errs.Map()[tc.path]; got != tc.en {
			t.Errorf("%s: API text %q, want %q (all: %v)", tc.path, got, tc.en, errs)
		}
		if got := errs.MapText(de)[tc.path]; got != tc.de {
			t.Errorf("%s: German %q, want %q", tc.path, got, tc.de)
		}
	}

	err := jobs.CheckModelName("a b")
	want := `"a b" is not a model id such as Qwen/Qwen2.5-7B-Instruct (a letter or digit first, then letters, digits, . _ : - and at most one /)`
	if err == nil || err.Error() != want {
		t.Fatalf("CheckModelName = %v, want %q", err, want)
	}
	if got := i18n.ErrorText(de, err); got != `"a b" ist keine Modell-ID wie Qwen/Qwen2.5-7B-Instruct (zuerst ein Buchstabe oder eine Ziffer, dann Buchstaben, Ziffern, . _ : - und höchstens ein /)` {
		t.Errorf("German = %q", got)
	}
	var d jobs.Duration
	if err := d.UnmarshalText([]byte("soon")); err == nil || err.Error() != `"soon" is not a duration (use a number with a unit, such as 500ms, 30s or 5m)` {
		t.Errorf("Duration error = %v", err)
	}
}

// TestErrorsSayTheCataloguesEnglish: every error the contract returns as a
// code (jobs.Error) names a key of the catalogue, and its own English text
// (what agentd logs) is the catalogue's English sentence for that code, so
// the two cannot drift apart; the German differs from it.
func TestErrorsSayTheCataloguesEnglish(t *testing.T) {
	t.Parallel()
	de := i18n.Default().Lang("de")
	var d jobs.Duration
	for _, err := range []error{
		jobs.CheckModelName(""),
		jobs.CheckModelName(strings.Repeat("a", jobs.MaxModelNameLen+1)),
		jobs.CheckModelName("a b"),
		jobs.CheckModelName("--trust-remote-code"),
		d.UnmarshalText([]byte("soon")),
		d.UnmarshalText([]byte("")),
	} {
		var je *jobs.Error
		if !errors.As(err, &je) || err != error(je) {
			t.Errorf("%v (%T) is not a *jobs.Error", err, err)
			continue
		}
		if !i18n.Has(je.Key) {
			t.Errorf("%q: key %q is not in the catalogue", err, je.Key)
			continue
		}
		m, ok := i18n.MessageOf(err)
		if !ok {
			t.Errorf("%q: i18n.MessageOf does not see the code", err)
			continue
		}
		if got := m.English(); got != err.Error() {
			t.Errorf("key %s: the catalogue's English is %q, the contract's %q", je.Key, got, err.Error())
		}
		if m.In(de) == err.Error() {
			t.Errorf("key %s: the German is the English %q", je.Key, err.Error())
		}
	}
}
