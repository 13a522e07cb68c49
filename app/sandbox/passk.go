package sandbox

// PassAtK is the unbiased estimator of Chen et al. (2021), "Evaluating
// Large Language Models Trained on Code", for one item with n samples of
// which c passed: 1 − C(n−c, k) / C(n, k), in the numerically stable
// product form of openai/human-eval human_eval/evaluation.py
// (estimate_pass_at_k): 1 − ∏_{i=n−c+1}^{n} (1 − k/i), and 1 when
// n − c < k. It needs k ≤ n.
func PassAtK(n, c, k int) float64 {
	if n-c < k {
		return 1
	}
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

// PassAtKMean is the benchmark's pass@k: the mean over items of PassAtK,
// each item with its own n (samples) and c (passed). ok is false when some
// item has fewer than k samples (human-eval then leaves pass@k out) or
// there are no items.
func PassAtKMean(n, c []int, k int) (v float64, ok bool) {
	if len(n) == 0 || len(n) != len(c) || k < 1 {
		return 0, false
	}
	sum := 0.0
	for i := range n {
		if n[i] < k {
			return 0, false
		}
		sum += PassAtK(n[i], c[i], k)
	}
	return sum / float64(len(n)), true
}

// ReportedK are the k a run reports pass@k for, where k ≤ n.
var ReportedK = []int{1, 10, 100}
