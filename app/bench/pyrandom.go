package bench

import "math/bits"

// pyRandom is CPython's random.Random (Modules/_randommodule.c, the
// Mersenne Twister MT19937 seeded by init_by_array from an integer's
// 32-bit words; Lib/random.py's _randbelow_with_getrandbits and sample),
// as far as lm-evaluation-harness's few-shot sampler uses it: the same
// seed draws the same examples in the same order as lm-eval does.
type pyRandom struct {
	mt  [624]uint32
	idx int
}

func newPyRandom(seed uint64) *pyRandom {
	r := &pyRandom{}
	// random_seed: the absolute value's 32-bit words, least significant
	// first; one zero word for 0.
	key := []uint32{uint32(seed)}
	if seed>>32 != 0 {
		key = append(key, uint32(seed>>32))
	}
	r.initByArray(key)
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.idx = 624
}

func (r *pyRandom) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(624, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

func (r *pyRandom) uint32() uint32 {
	if r.idx >= 624 {
		for k := 0; k < 624; k++ {
			y := r.mt[k]&0x80000000 | r.mt[(k+1)%624]&0x7fffffff
			v := r.mt[(k+397)%624] ^ (y >> 1)
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.idx = 0
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	return y ^ (y >> 18)
}

// randBelow is _randbelow_with_getrandbits for 0 < n < 2³²: getrandbits
// of n's bit length, drawn again while not below n.
func (r *pyRandom) randBelow(n int) int {
	k := bits.Len(uint(n))
	for {
		v := int(r.uint32() >> (32 - k))
		if v < n {
			return v
		}
	}
}

// sample is random.sample(range(n), k): k distinct indexes below n in
// the order drawn, by the same two strategies as Python's (a shrinking
// pool for small n, else redrawing repeats).
func (r *pyRandom) sample(n, k int) []int {
	out := make([]int, k)
	setsize := 21
	if k > 5 {
		// 4 ** ceil(log(3k, 4)), computed as Python's float log does for
		// the small k used here.
		e := 0
		for p := 1; p < 3*k; p *= 4 {
			e++
		}
		setsize += 1 << (2 * e)
	}
	if n <= setsize {
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i
		}
		for i := range k {
			j := r.randBelow(n - i)
			out[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return out
	}
	seen := make(map[int]bool, k)
	for i := range k {
		j := r.randBelow(n)
		for seen[j] {
			j = r.randBelow(n)
		}
		seen[j] = true
		out[i] = j
	}
	return out
}
