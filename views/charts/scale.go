package charts

import (
	"math"
	"strconv"
)

// Scale is one axis: its domain, the tick values on it (1–2–5 steps) and
// how many decimals tell the ticks apart.
type Scale struct {
	Min, Max float64
	Ticks    []float64
	Decimals int
}

// maxTicks is the most tick labels an axis gets.
const maxTicks = 6

// NiceScale makes an axis for data from lo to hi: zero included when
// asked (quantities whose size matters), 5 % of padding on each side
// (never across zero), ticks on 1, 2 or 5 × 10ⁿ, and a domain that starts
// and ends on a tick. Equal values (or all zero) never collapse the axis:
// it widens to ±5 % around them (±1 around zero). NaN and infinities are
// the caller's to leave out; without data the axis is 0 to 1.
func NiceScale(lo, hi float64, includeZero bool) Scale {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return Scale{Min: 0, Max: 1, Ticks: []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, Decimals: 1}
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	if includeZero {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	if span := hi - lo; span <= 1e-12*math.Max(math.Abs(lo), math.Abs(hi)) || span == 0 {
		c := (lo + hi) / 2
		w := math.Abs(c) * 0.05
		switch {
		case c == 0:
			lo, hi = 0, 1 // nothing but zeros: an axis from zero up
		case includeZero && c > 0:
			lo, hi = 0, c+w
		case includeZero:
			lo, hi = c-w, 0
		default:
			lo, hi = c-w, c+w
		}
	} else {
		pad := span * 0.05
		if !(includeZero && lo == 0) {
			lo -= pad
		}
		if !(includeZero && hi == 0) {
			hi += pad
		}
		// Padding never takes an axis of positive values below zero.
		if lo < 0 && lo+pad >= 0 {
			lo = 0
		}
	}
	step := niceStep((hi - lo) / (maxTicks - 1))
	s := Scale{Min: math.Floor(lo/step+1e-9) * step, Max: math.Ceil(hi/step-1e-9) * step}
	for v := s.Min; v <= s.Max+step/2; v += step {
		s.Ticks = append(s.Ticks, snap(v, step))
	}
	s.Decimals = max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	return s
}

// niceStep rounds x up to 1, 2 or 5 × 10ⁿ.
func niceStep(x float64) float64 {
	if !(x > 0) {
		return 1
	}
	exp := math.Floor(math.Log10(x))
	f := x / math.Pow(10, exp)
	switch {
	case f <= 1:
		f = 1
	case f <= 2:
		f = 2
	case f <= 5:
		f = 5
	default:
		f = 10
	}
	return f * math.Pow(10, exp)
}

// snap removes the float noise of adding steps (0.30000000000000004).
func snap(v, step float64) float64 {
	r := math.Round(v/step) * step
	if math.Abs(r) < step*1e-9 {
		return 0
	}
	return r
}

// Label writes a tick value with the scale's decimals; thousands and
// millions get k and M (with the decimals their step needs).
func (s Scale) Label(v float64) string {
	a := math.Max(math.Abs(s.Min), math.Abs(s.Max))
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', s.decimalsNeeded(1e9), 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', s.decimalsNeeded(1e6), 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', s.decimalsNeeded(1e3), 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', s.Decimals, 64)
}

// decimalsNeeded is how many decimals tell the ticks apart once divided by
// unit.
func (s Scale) decimalsNeeded(unit float64) int {
	if len(s.Ticks) < 2 {
		return 0
	}
	step := (s.Ticks[1] - s.Ticks[0]) / unit
	return max(0, -int(math.Floor(math.Log10(step)+1e-9)))
}
