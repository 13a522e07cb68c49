package conclude_test

import (
	"context"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/valid"
)

// TestPlannerMessagesKeepTheirEnglishText: the planners' msg tags name
// catalogue keys; the API answers the English sentences it always did and
// a page reads them in German.
func TestPlannerMessagesKeepTheirEnglishText(t *testing.T) {
	t.Parallel()
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	for _, tc := range []struct {
		v            any
		path, en, de string
	}{
		{&conclude.Traffic{PeakRPS: 10, AverageRPS: 20, InputTokens: 1, OutputTokens: 1}, "average_rps",
			"cannot be above the peak", "darf nicht über der Spitze liegen"},
		{&conclude.Traffic{PeakRPS: 2e6, AverageRPS: 1, InputTokens: 1, OutputTokens: 1}, "peak_rps",
			"requests per second at peak, above 0 and at most 1,000,000", "Anfragen pro Sekunde in der Spitze, größer als 0 und höchstens 1.000.000"},
		{&conclude.Costs{Utilisation: 2}, "utilisation",
			"the share of those hours the replicas are up, from 0 (default 1) to 1", "der Anteil dieser Stunden, in denen die Replikate laufen, von 0 (Standard 1) bis 1"},
		{&conclude.Today{Model: "acme/small-1b", Hardware: "cpu-2c"}, "replicas",
			"the replicas you run today, from 1 to 100,000", "die Replikate, die Sie heute betreiben, von 1 bis 100.000"},
	} {
		errs := valid.Default().Struct(tc.v)
		if got := errs.Map()[tc.path]; got != tc.en {
			t.Errorf("%s: API text %q, want %q (all: %v)", tc.path, got, tc.en, errs)
		}
		if got := errs.MapText(de)[tc.path]; got != tc.de {
			t.Errorf("%s: German %q, want %q", tc.path, got, tc.de)
		}
	}
}
