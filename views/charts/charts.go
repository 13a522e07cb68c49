// Package charts draws small line and scatter charts as SVG on the server:
// no JavaScript chart library, hover titles on the points, and nothing in
// them but numbers and the labels the page gives.
package charts

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Point is one datum; Label is its hover title. Href, when set, makes the
// point a link (to the run it stands for).
type Point struct {
	X, Y  float64
	Label string
	Href  string
	// Flagged points are drawn larger, with a ring (a regression).
	Flagged bool
}

// Series is one line (or set of dots) of a chart.
type Series struct {
	Name   string
	Points []Point
	// Dots draws only the points (a scatter), not the line between them.
	Dots bool
}

// Chart is a chart's data and labels.
type Chart struct {
	ID, Title, XLabel, YLabel string
	Series                    []Series
	// measured are the axes, once Measured has computed them.
	measured *axes
}

// axes are a chart's X and Y scales.
type axes struct{ x, y Scale }

// Measured is c with its axes computed once, for drawing it: every point's
// position reads them, and computing them again for each point made a
// chart's drawing quadratic in its points — most of a live run card's
// rendering (docs/self-benchmarks.md#live-pages).
func (c Chart) Measured() Chart {
	x, y := c.measure()
	c.measured = &axes{x, y}
	return c
}

// Geometry of the drawing, in SVG user units.
const (
	Width  = 640
	Height = 240
	left   = 56
	right  = 12
	top    = 12
	bottom = 36
)

// Empty says whether there is nothing to draw.
func (c Chart) Empty() bool {
	for _, s := range c.Series {
		if len(s.Points) > 0 {
			return false
		}
	}
	return true
}

// scales are the chart's axes: X over the data, Y from zero (sizes are
// read against zero) — both on nice ticks, never collapsed.
func (c Chart) scales() (Scale, Scale) {
	if c.measured != nil {
		return c.measured.x, c.measured.y
	}
	return c.measure()
}

// measure computes the axes (scales).
func (c Chart) measure() (Scale, Scale) {
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
				continue
			}
			x0, x1 = math.Min(x0, p.X), math.Max(x1, p.X)
			y0, y1 = math.Min(y0, p.Y), math.Max(y1, p.Y)
		}
	}
	if math.IsInf(x0, 1) {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	return NiceScale(x0, x1, false), NiceScale(y0, y1, true)
}

// bounds are the axes' domains.
func (c Chart) bounds() (x0, x1, y0, y1 float64) {
	xs, ys := c.scales()
	return xs.Min, xs.Max, ys.Min, ys.Max
}

func (c Chart) scale() (func(float64) float64, func(float64) float64) {
	x0, x1, y0, y1 := c.bounds()
	sx := func(x float64) float64 { return left + (x-x0)/(x1-x0)*(Width-left-right) }
	sy := func(y float64) float64 { return Height - bottom - (y-y0)/(y1-y0)*(Height-top-bottom) }
	return sx, sy
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// Polyline is the series' points as an SVG points attribute.
func (c Chart) Polyline(s Series) string {
	sx, sy := c.scale()
	var b strings.Builder
	for i, p := range s.Points {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f(sx(p.X)) + "," + f(sy(p.Y)))
	}
	return b.String()
}

// Dot is a point's position.
func (c Chart) Dot(p Point) (string, string) {
	sx, sy := c.scale()
	return f(sx(p.X)), f(sy(p.Y))
}

// Tick is an axis label at a position.
type Tick struct {
	Pos   string
	Label string
}

// XTicks and YTicks are the axes' labels, on their nice tick values.
func (c Chart) XTicks() []Tick {
	xs, _ := c.scales()
	sx, _ := c.scale()
	out := make([]Tick, len(xs.Ticks))
	for i, v := range xs.Ticks {
		out[i] = Tick{f(sx(v)), xs.Label(v)}
	}
	return out
}

func (c Chart) YTicks() []Tick {
	_, ys := c.scales()
	_, sy := c.scale()
	out := make([]Tick, len(ys.Ticks))
	for i, v := range ys.Ticks {
		out[i] = Tick{f(sy(v)), ys.Label(v)}
	}
	return out
}

// DirectLabel places a line series' name at its last point, for charts of
// up to eight series (more are left to the legend).
func (c Chart) DirectLabel(s Series) (x, y string, ok bool) {
	if s.Dots || len(s.Points) == 0 || len(c.Series) > 8 || len(c.Series) < 2 {
		return "", "", false
	}
	sx, sy := c.scale()
	p := s.Points[len(s.Points)-1]
	return f(sx(p.X)), f(math.Max(sy(p.Y)-5, top+8)), true
}

// Role is the drawing's ARIA role: an image, or a group when its points
// are links (an image may not hold interactive content).
func (c Chart) Role() string {
	for _, s := range c.Series {
		for _, p := range s.Points {
			if p.Href != "" {
				return "group"
			}
		}
	}
	return "img"
}

// Class is the CSS class of the n-th series (its colour).
func Class(n int) string { return fmt.Sprintf("series-%d", n%8) }

// Plot box corners, for the axes.
func axisX() (string, string, string) { return f(left), f(Width - right), f(Height - bottom) }
func axisY() (string, string, string) { return f(left), f(top), f(Height - bottom) }
func viewBox() string                 { return fmt.Sprintf("0 0 %d %d", Width, Height) }
