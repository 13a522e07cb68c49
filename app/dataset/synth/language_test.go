package synth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/i18n"
)

// TestSpecMessagesKeepTheirEnglishText: a spec's errors, from its tags and
// from the steps after them, are catalogue messages; the API answers the
// English sentences it always did, numbers included, and a page reads
// them in German.
func TestSpecMessagesKeepTheirEnglishText(t *testing.T) {
	t.Parallel()
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	spec := synth.Spec{Kind: synth.KindRandom, Count: 200000, Seed: 3, Endpoint: synth.EndpointChat,
		Input:  synth.Dist{Kind: synth.DistUniform, Min: 20, Max: 10},
		Output: synth.Dist{Kind: synth.DistLognormal, Sigma: 1}}
	_, errs := spec.Validate()
	en, german := errs.Map(), errs.MapText(de)
	for _, tc := range []struct{ path, en, de string }{
		{"count", "the number of items, conversations or requests: between 1 and 100000",
			"die Zahl der Einträge, Gespräche oder Anfragen: zwischen 1 und 100000"},
		{"input.max", "at least min (20) and at most 131072 (got 10)", "mindestens min (20) und höchstens 131072 (erhalten: 10)"},
		{"output.median", "give the median (or the mean) of the lengths", "geben Sie den Median (oder den Mittelwert) der Längen an"},
	} {
		if en[tc.path] != tc.en {
			t.Errorf("%s: API text %q, want %q (all: %v)", tc.path, en[tc.path], tc.en, errs)
		}
		if german[tc.path] != tc.de {
			t.Errorf("%s: German %q, want %q", tc.path, german[tc.path], tc.de)
		}
	}

	// A total over the limit: its figure is the same in both languages.
	spec = synth.Spec{Kind: synth.KindRandom, Count: 1000, Endpoint: synth.EndpointChat,
		Input:  synth.Dist{Kind: synth.DistFixed, Value: 100000},
		Output: synth.Dist{Kind: synth.DistFixed, Value: 16}}
	_, errs = spec.Validate()
	if got := errs.Map()["input"]; got != "the prompts could reach 100000000 tokens in all; at most 20000000 (fewer items or shorter prompts)" {
		t.Errorf("total in English: %q (all: %v)", got, errs)
	}
	if got := errs.MapText(de)["input"]; got != "die Prompts könnten insgesamt 100000000 Tokens erreichen; höchstens 20000000 (weniger Einträge oder kürzere Prompts)" {
		t.Errorf("total in German: %q", got)
	}
}

// TestTraceErrorsInBothLanguages: a trace's line errors keep their English
// (the API's) and read in German with their line and field.
func TestTraceErrorsInBothLanguages(t *testing.T) {
	_, errs := synth.ParseTrace(strings.NewReader(`{"input_length": 5, "output_length": 3}` + "\n"))
	if len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	if got := errs[0].Error(); got != "line 1, timestamp: missing: the send time in seconds from the start" {
		t.Errorf("English %q", got)
	}
	if got := errs[0].Whole().In(i18n.Default().Lang("de")); got != "Zeile 1, timestamp: fehlt: die Sendezeit in Sekunden ab dem Start" {
		t.Errorf("German %q", got)
	}
}
