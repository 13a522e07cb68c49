package handlers

import (
	"context"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/views/said"
)

// notFinal is, worded for ctx's reader, what a benchmark's conclusions
// still wait for; "" once they are complete (conclude.Status). The API
// words it in English (context.Background()).
func notFinal(ctx context.Context, st conclude.Status) string {
	if !st.Pending {
		return ""
	}
	return said.Word(ctx, conclude.Say("concluding.not_final", "Reason", st.Reason))
}

// apiRecommendation is a recommendation as the API answers it, with
// whether the benchmark's conclusions are still being computed.
type apiRecommendation struct {
	conclude.Recommendation
	Pending       bool   `json:"pending"`
	PendingReason string `json:"pending_reason,omitempty"`
}
