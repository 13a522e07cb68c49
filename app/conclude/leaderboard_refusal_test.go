package conclude

import (
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// Quality ranks nothing under a refusal scorer (a refusal rate is not a
// quality where more is better): the list is by date, saying why; under
// any other scorer, or none named, the quality sort stands.
func TestLeaderboardRanksNoRefusalRate(t *testing.T) {
	for _, c := range []struct {
		scorer, want string
		why          bool
	}{
		{"refusal", store.SortDate, true},
		{`refusal {"categories":true}`, store.SortDate, true},
		{"exact", store.SortQuality, false},
		{"", store.SortQuality, false},
	} {
		s, why := LeaderboardSort(store.SortQuality, c.scorer, "")
		if s != c.want || (why.Code != "") != c.why {
			t.Errorf("quality under %q: by %s (%v), want by %s", c.scorer, s, why, c.want)
		}
		if c.why && why.Code != "compare.said.not_ranked_refusal" {
			t.Errorf("quality under %q: reason %v", c.scorer, why)
		}
	}
	if s, _ := LeaderboardSort(store.SortSpeed, "refusal", ""); s != store.SortSpeed {
		t.Errorf("speed under a refusal scorer: by %s, want by speed", s)
	}
}
