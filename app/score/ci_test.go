package score

import "testing"

func TestMeanCI(t *testing.T) {
	v := make([]float64, 400)
	for i := range v {
		if i%4 != 0 {
			v[i] = 1
		}
	}
	m, lo, hi := MeanCI(v, 1)
	_, lo2, hi2 := MeanCI(v, 1)
	// Normal approximation: 0.75 ± 1.96·sqrt(0.75·0.25/400) = ±0.042.
	if m != 0.75 || lo != lo2 || hi != hi2 || lo > 0.72 || lo < 0.69 || hi < 0.78 || hi > 0.81 {
		t.Fatalf("mean %v CI [%v, %v] (again [%v, %v])", m, lo, hi, lo2, hi2)
	}
	if _, lo, hi := MeanCI([]float64{1, 1, 1}, 1); lo != 1 || hi != 1 {
		t.Fatalf("constant scores: [%v, %v]", lo, hi)
	}
}
