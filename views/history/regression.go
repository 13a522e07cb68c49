package history

import (
	"context"
	"encoding/json"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/said"
)

// RegressionText is a regression flag's sentence in the reader's language:
// what was compared, how it was decided and by which test. A flag stored
// before its sentence was kept as codes shows its English.
func RegressionText(ctx context.Context, g store.Regression) string {
	if len(g.DetailSaid) > 0 {
		var s conclude.Said
		if json.Unmarshal(g.DetailSaid, &s) == nil {
			return said.Word(ctx, s)
		}
	}
	return g.Detail
}
