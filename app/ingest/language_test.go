package ingest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/ingest"
)

// TestSettingErrorsInTheReadersLanguage: an upload's settings refused
// before the file is read keep their English text for the API and read in
// German on a page.
func TestSettingErrorsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	le := ingest.CheckShots(dataset.MaxShots + 1)
	if le == nil || le.Field != "shots" || le.Message != fmt.Sprintf("shots must be a whole number from 0 to %d", dataset.MaxShots) {
		t.Fatalf("CheckShots = %+v", le)
	}
	if got, want := le.Text(de), fmt.Sprintf("shots muss eine ganze Zahl von 0 bis %d sein", dataset.MaxShots); got != want {
		t.Errorf("German = %q, want %q", got, want)
	}
	le = ingest.CheckSettings("x", "public")
	if le == nil || le.Message != `visibility must be "private" or "shared"` || le.Text(de) != `visibility muss "private" oder "shared" sein` {
		t.Errorf("CheckSettings = %+v", le)
	}
}
