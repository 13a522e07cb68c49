package results

import (
	"context"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/judge"
)

// Every shipped rubric's title reaches a page through the catalogue, so a
// German page names it in German (the compare page's judge options, the
// run page's judge form).
func TestEveryRubricTitleIsInTheCatalogue(t *testing.T) {
	t.Parallel()
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	for _, r := range judge.Rubrics("") {
		key, ok := rubricTitles[r.Name]
		if !ok || !i18n.Has(key) {
			t.Errorf("rubric %s (%q) has no catalogue title", r.Name, r.Title)
			continue
		}
		if got := rubricTitle(de, r); got == r.Title {
			t.Errorf("rubric %s is %q in German too", r.Name, got)
		}
	}
}
