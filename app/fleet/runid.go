package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// TimestampFormat is the submission time in a fleet run id (UTC, to the
// second).
const TimestampFormat = "20060102T150405Z"

// RunID is a fleet run's id, {fleet}-{submitted}-{hash}: the fleet's name,
// its submission time in UTC to the second, and the first 12 hex digits of
// the SHA-256 of the scenario's key (Scenario.Key) and the target's model, runtime and
// hardware (NUL-separated). The same fleet, submission time, scenario and
// target always give the same id; a fleet's runs all differ, since its
// scenario names and its targets do.
func RunID(fleet string, submitted time.Time, scenario string, t Target) string {
	h := sha256.Sum256([]byte(scenario + "\x00" + t.key()))
	return fleet + "-" + submitted.UTC().Format(TimestampFormat) + "-" + hex.EncodeToString(h[:6])
}
