package conclude

import (
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// ReplicaPrice is what one replica of a configuration costs per hour on a
// hardware profile priced pricePerHour for its gpus GPUs: a configuration
// that sets tensor parallelism to k (vLLM's tensor_parallel_size,
// SGLang's tp) holds k of the profile's GPUs, so it costs price × k ÷ G
// and the rest of the machine can serve other replicas. Without that
// setting the replica holds the whole profile, as before engine settings
// existed: a runtime's default may spread over every GPU it sees (TGI
// shards over all of them), so nothing smaller is known to be paid
// (docs/benchmarks.md#tensor-parallelism-and-price). A k beyond G is
// refused when the benchmark is made (jobs.CheckEngine); here it is
// capped at the whole profile.
func ReplicaPrice(pricePerHour float64, gpus int, e jobs.Engine) float64 {
	if gpus <= 0 {
		return pricePerHour
	}
	return pricePerHour * float64(ReplicaGPUs(gpus, e)) / float64(gpus)
}

// PricePerHour is run r's replica price per hour (ReplicaPrice of its
// hardware profile's price under its engine settings); nil when the
// profile has no price.
func PricePerHour(r store.RunFigures) *float64 {
	if r.PricePerHour == nil {
		return nil
	}
	p := ReplicaPrice(*r.PricePerHour, r.GPUCount, r.Engine)
	return &p
}

// CostPer1M is the one cost function of a run, every surface that costs
// a run goes through it: its cost per 1M output tokens. For a run paid by
// the token, (input tokens × input price + output tokens × output price)
// ÷ output tokens, as the fleet report prices it; for others, its replica
// price per hour (PricePerHour) over its output tokens/s
// (jobs.RunSummary.CostPer1M). tokenPriced says which; ok is false when
// there is no price or nothing was generated.
func CostPer1M(r store.RunFigures, s jobs.RunSummary) (cost float64, tokenPriced, ok bool) {
	if p := r.TokenPrice; p != nil {
		if r.OutputTokens <= 0 {
			return 0, true, false
		}
		return (float64(r.PromptTokens)*p.InputPer1M + float64(r.OutputTokens)*p.OutputPer1M) / float64(r.OutputTokens), true, true
	}
	price := PricePerHour(r)
	if price == nil {
		return 0, false, false
	}
	c, ok := s.CostPer1M(*price)
	return c, false, ok
}

// ReplicaGPUs is how many of a profile's gpus GPUs one replica of a
// configuration holds: the tensor parallelism it sets (at most gpus),
// else the whole profile, as ReplicaPrice prices it.
func ReplicaGPUs(gpus int, e jobs.Engine) int {
	_, tp := e["tensor_parallel_size"]
	_, sg := e["tp"]
	if gpus <= 0 || !tp && !sg {
		return gpus
	}
	return min(e.TensorParallel(), gpus)
}
