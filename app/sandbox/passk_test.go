package sandbox_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/ruckus/ruckus/app/sandbox"
)

// Hand-computed: 1 − C(n−c, k)/C(n, k).
func TestPassAtKByHand(t *testing.T) {
	for _, tc := range []struct {
		n, c, k int
		want    float64
	}{
		{1, 0, 1, 0},
		{1, 1, 1, 1},
		{10, 3, 1, 0.3},       // c/n
		{10, 0, 10, 0},        // no pass ever
		{10, 1, 10, 1},        // n−c < k
		{5, 2, 2, 1 - 3.0/10}, // C(3,2)=3, C(5,2)=10
		{4, 1, 2, 1 - 3.0/6},  // C(3,2)=3, C(4,2)=6
		{6, 2, 3, 1 - 4.0/20}, // C(4,3)=4, C(6,3)=20
		{100, 50, 10, 1 - 10272278170.0/17310309456440.0}, // C(50,10), C(100,10)
	} {
		if got := sandbox.PassAtK(tc.n, tc.c, tc.k); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("pass@%d(n=%d, c=%d) = %.15g, want %.15g", tc.k, tc.n, tc.c, got, tc.want)
		}
	}
}

// Against numpy's evaluation of the same product (and the exact ratio of
// binomials), by testdata/passk_vectors.py.
func TestPassAtKVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/passk_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []struct {
			N, C, K      int
			Numpy, Exact float64
		}
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) < 50 {
		t.Fatalf("%d vectors", len(v.Cases))
	}
	for _, c := range v.Cases {
		got := sandbox.PassAtK(c.N, c.C, c.K)
		if math.Abs(got-c.Numpy) > 1e-13 || math.Abs(got-c.Exact) > 1e-12 {
			t.Errorf("pass@%d(n=%d, c=%d) = %.17g; numpy %.17g, exact %.17g", c.K, c.N, c.C, got, c.Numpy, c.Exact)
		}
	}
}

func TestPassAtKMean(t *testing.T) {
	v, ok := sandbox.PassAtKMean([]int{10, 10}, []int{5, 0}, 1)
	if !ok || math.Abs(v-0.25) > 1e-15 {
		t.Fatalf("pass@1 = %v %v, want 0.25", v, ok)
	}
	if _, ok := sandbox.PassAtKMean([]int{10, 5}, []int{1, 1}, 10); ok {
		t.Fatal("pass@10 with an item of 5 samples must be left out")
	}
	if _, ok := sandbox.PassAtKMean(nil, nil, 1); ok {
		t.Fatal("pass@1 of no items")
	}
}
