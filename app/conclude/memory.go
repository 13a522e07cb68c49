// Package conclude holds the reasoning behind recommendations: how much GPU
// memory a model needs, and (as it grows) constraints, ranking and the
// Pareto front.
package conclude

import (
	"math"
	"sort"
	"strings"
)

// bytesPerParam is the storage of one weight in each quantisation Ruckus
// knows. GGUF k-quants average a little over their nominal bits.
var bytesPerParam = map[string]float64{
	"fp32": 4, "bf16": 2, "fp16": 2,
	"fp8": 1, "int8": 1, "q8_0": 1.0625,
	"q6_k": 0.82, "q5_k_m": 0.71, "q4_k_m": 0.61, "q4_0": 0.5625,
	"int4": 0.5, "awq": 0.5, "gptq": 0.5,
}

// Quantizations lists the known quantisations, sorted.
func Quantizations() []string {
	out := make([]string, 0, len(bytesPerParam))
	for q := range bytesPerParam {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

// KnownQuantization reports whether q is in the table.
func KnownQuantization(q string) bool {
	_, ok := bytesPerParam[strings.ToLower(q)]
	return ok
}

// kvAllowance is the share added to the weights for the KV cache,
// activations and the runtime's own buffers at a moderate batch size.
const kvAllowance = 0.20

// EstimateMemoryGB is the GPU memory a model needs to serve, in GB (10⁹
// bytes): parameters × bytes per parameter, plus 20 % for the KV cache and
// activations, rounded up to a tenth. An unknown quantisation counts as
// 16-bit, the common default.
func EstimateMemoryGB(paramsB float64, quantization string) float64 {
	bpp, ok := bytesPerParam[strings.ToLower(quantization)]
	if !ok {
		bpp = 2
	}
	gb := paramsB * bpp * (1 + kvAllowance)
	return math.Ceil(gb*10-1e-9) / 10
}
