package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"

	"github.com/ruckus/ruckus/agentd/sim"
)

// simAnswers reads the answers the server decided for a sim run's items
// (readable only for runs this agent holds). Without them, or on another
// runtime, it returns nil and the simulated runtime streams filler.
func (w *runWorker) simAnswers(ctx context.Context, runID int64, log *slog.Logger) map[int]string {
	if w.backend.Mode(w.gpus > 0) != "sim" {
		return nil
	}
	answers, err := w.st.SimAnswers(ctx, runID)
	if err != nil {
		// Filler still measures timings; only the quality is lost.
		log.Warn("reading the run's simulated answers; streaming filler", "err", err)
		return nil
	}
	return answers
}

// withSimAnswer adds the item's decided answer to a request body for the
// simulated runtime, which streams it instead of filler.
func withSimAnswer(body []byte, answer string, ok bool) []byte {
	end := bytes.LastIndexByte(body, '}')
	if !ok || end < 1 {
		return body
	}
	val, err := json.Marshal(answer)
	if err != nil {
		return body
	}
	out := make([]byte, 0, len(body)+len(val)+len(sim.AnswerField)+4)
	out = append(out, body[:end]...)
	if len(bytes.TrimSpace(body[1:end])) > 0 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, sim.AnswerField...)
	out = append(out, '"', ':')
	out = append(out, val...)
	return append(out, body[end:]...)
}
