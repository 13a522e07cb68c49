package conclude

import "testing"

func TestEstimateMemoryGB(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		params float64
		quant  string
		want   float64
	}{
		{7, "bf16", 16.8},    // 7 × 2 × 1.2
		{7, "BF16", 16.8},    // case does not matter
		{8, "fp8", 9.6},      // 8 × 1 × 1.2
		{70, "int4", 42},     // 70 × 0.5 × 1.2
		{0.5, "fp16", 1.2},   // 0.5 × 2 × 1.2
		{7, "mystery", 16.8}, // unknown → 16-bit
		{1.5, "q4_k_m", 1.1}, // 1.5 × 0.61 × 1.2 = 1.098 → 1.1
	} {
		if got := EstimateMemoryGB(tc.params, tc.quant); got != tc.want {
			t.Errorf("EstimateMemoryGB(%v, %q) = %v, want %v", tc.params, tc.quant, got, tc.want)
		}
	}
	if !KnownQuantization("q4_k_m") || KnownQuantization("q3") {
		t.Error("KnownQuantization")
	}
}
