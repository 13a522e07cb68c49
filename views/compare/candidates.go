package compare

import (
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
)

// Candidates are runs as every conclusion weighs them (the verdict, the
// comparison, both recommendations, the report): their figures from the
// stored summaries, the intervals and load identity kept in run_stats and
// the scorer identity of their latest quality. A figure the run did not
// measure — no summary, no successful request, no output — is nil ("not
// measured"), never 0.
func Candidates(runs []store.RunFigures) []conclude.Candidate {
	var cands []conclude.Candidate
	for _, r := range runs {
		f := NewFigures(r)
		cand := conclude.Candidate{RunID: r.ID, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile,
			Quality: r.Quality, QualityLo: r.QualityLo, QualityHi: r.QualityHi, CostPer1M: f.CostPer1M, TokenPriced: f.TokenPriced, GPUMemGiB: f.PeakGPUGiB}
		if f.TokensPerS != nil && *f.TokensPerS > 0 {
			cand.TokensPS = f.TokensPerS
		}
		// A successful request always takes time: a p95 of 0 means none.
		if f.HasSummary && f.E2E.P95 > 0 {
			ttft, e2e := f.TTFT.P95, f.E2E.P95
			cand.TTFTp95, cand.E2Ep95 = &ttft, &e2e
		}
		cand.ScorerKey = r.ScorerKey()
		cand.Drift = r.Drift
		if st := r.Stat; st != nil {
			load := st.Load
			cand.Load, cand.TPS = &load, st.TPS
			if cand.E2Ep95 != nil {
				cand.E2EN = st.OK
			}
			if q := st.E2EP95; q != nil && cand.E2Ep95 != nil {
				lo, hi := q.Lo, q.Hi
				cand.E2Ep95Lo, cand.E2Ep95Hi, cand.E2ECoverage = &lo, &hi, q.Coverage
			}
		}
		cands = append(cands, cand)
	}
	return cands
}
