package score

import (
	"math/rand/v2"
	"slices"

	"github.com/ruckus/ruckus/app/stats"
)

// BootstrapResamples is how many resamples MeanCI draws.
const BootstrapResamples = 2000

// MeanCI is a run's quality: the mean score and its 95 % percentile-
// bootstrap confidence interval — BootstrapResamples resamples with
// replacement from a PCG source seeded with seed (so the interval is
// repeatable), the 2.5th and 97.5th percentiles of their means.
func MeanCI(scores []float64, seed uint64) (mean, lo, hi float64) {
	n := len(scores)
	if n == 0 {
		return 0, 0, 0
	}
	for _, s := range scores {
		mean += s
	}
	mean /= float64(n)
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	means := make([]float64, BootstrapResamples)
	for i := range means {
		sum := 0.0
		for range n {
			sum += scores[rng.IntN(n)]
		}
		means[i] = sum / float64(n)
	}
	slices.Sort(means)
	return mean, stats.Percentile(means, 0.025), stats.Percentile(means, 0.975)
}
