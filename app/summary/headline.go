package summary

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ruckus/ruckus/jobs"
)

// HeadlineStore reads a run's rows and reads and writes its headline
// figures (docs/gpu-nodes.md#the-figures-an-agent-reports); the store
// satisfies it.
type HeadlineStore interface {
	Source
	RunSLO(ctx context.Context, runID int64) (jobs.SLO, bool, error)
	WriteRunHeadline(ctx context.Context, runID int64, tps, rps float64, summary []byte) error
	RunHeadline(ctx context.Context, runID int64) (tps, rps float64, summary []byte, err error)
}

// headline is a run's summary computed from its result rows under its
// benchmark's SLOs, as JSON; an imported run's is empty (no requests).
func headline(ctx context.Context, st HeadlineStore, runID int64) (jobs.RunSummary, []byte, error) {
	slo, imported, err := st.RunSLO(ctx, runID)
	if err != nil || imported {
		return jobs.RunSummary{}, nil, err
	}
	sum, err := Run(ctx, st, runID, slo, 0)
	if err != nil {
		return jobs.RunSummary{}, nil, fmt.Errorf("run %d's figures: %w", runID, err)
	}
	raw, err := json.Marshal(sum)
	return sum, raw, err
}

// RecomputeHeadline writes a finished run's throughput, requests per
// second and summary as its result rows give them, over what its agent
// wrote. A run without result rows (none was answered) keeps what it has.
func RecomputeHeadline(ctx context.Context, st HeadlineStore, runID int64) error {
	sum, raw, err := headline(ctx, st, runID)
	if err != nil || sum.Requests == 0 {
		return err
	}
	return st.WriteRunHeadline(ctx, runID, sum.OutputTokensPerS, sum.RequestsPerS, raw)
}

// CheckHeadline says what of a finished run's stored headline figures
// differs from what its result rows give ("" when nothing does).
func CheckHeadline(ctx context.Context, st HeadlineStore, runID int64) (string, error) {
	sum, raw, err := headline(ctx, st, runID)
	if err != nil || sum.Requests == 0 {
		return "", err
	}
	tps, rps, stored, err := st.RunHeadline(ctx, runID)
	if err != nil {
		return "", err
	}
	switch {
	case !nearly(tps, sum.OutputTokensPerS):
		return fmt.Sprintf("its throughput is %g tokens/s; its result rows give %g", tps, sum.OutputTokensPerS), nil
	case !nearly(rps, sum.RequestsPerS):
		return fmt.Sprintf("its requests per second are %g; its result rows give %g", rps, sum.RequestsPerS), nil
	}
	var was, is any
	if json.Unmarshal(stored, &was) != nil || json.Unmarshal(raw, &is) != nil {
		return "its summary is not a run summary", nil
	}
	if where := differs("summary", was, is); where != "" {
		return fmt.Sprintf("its %s is not what its result rows give", where), nil
	}
	return "", nil
}

// differs names the first place where two JSON values differ, numbers to
// within float rounding (sums over many rows may add in another order);
// "" when none does.
func differs(at string, a, b any) string {
	switch a := a.(type) {
	case float64:
		if b, ok := b.(float64); ok && nearly(a, b) {
			return ""
		}
		return at
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(bm) != len(a) {
			return at
		}
		for k, v := range a {
			if d := differs(at+"."+k, v, bm[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bs, ok := b.([]any)
		if !ok || len(bs) != len(a) {
			return at
		}
		for i := range a {
			if d := differs(fmt.Sprintf("%s[%d]", at, i), a[i], bs[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if a != b {
			return at
		}
		return ""
	}
}

// nearly compares two figures to within float rounding: a part in 10⁹.
func nearly(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, a, -a, b, -b)
}
