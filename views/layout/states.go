package layout

import (
	"context"

	"github.com/ruckus/ruckus/app/i18n"
)

// stateKeys are the catalogue keys of the states the pages show as badges:
// runs', benchmarks', agents' and results'. The stored value stays English
// (it is data); the badge says it in the reader's language.
var stateKeys = map[string]string{
	"queued":       "state.queued",
	"running":      "state.running",
	"completed":    "state.completed",
	"failed":       "state.failed",
	"cancelled":    "state.cancelled",
	"online":       "state.online",
	"offline":      "state.offline",
	"stale":        "state.stale",
	"incompatible": "state.incompatible",
	"drained":      "state.drained",
	"deactivated":  "state.deactivated",
	"private":      "state.private",
	"shared":       "state.shared",
	"ok":           "state.ok",
	"error":        "state.error",
	"passed":       "state.passed",
	"exception":    "state.exception",
	"syntax_error": "state.syntax_error",
	"timeout":      "state.timeout",
	"killed":       "state.killed",
	"judging":      "state.judging",
	"judged":       "state.judged",
}

// State is a state's word in the request's language; a state the
// catalogue does not know shows as stored.
func State(ctx context.Context, s string) string {
	if k, ok := stateKeys[s]; ok {
		return i18n.T(ctx, k)
	}
	return s
}
