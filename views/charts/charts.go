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

// Point is one datum; Label is its hover title.
type Point struct {
	X, Y  float64
	Label string
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

// bounds are the data ranges, with zero included on Y and a little room.
func (c Chart) bounds() (x0, x1, y0, y1 float64) {
	x0, x1, y0, y1 = math.Inf(1), math.Inf(-1), 0, math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			x0, x1 = math.Min(x0, p.X), math.Max(x1, p.X)
			y0, y1 = math.Min(y0, p.Y), math.Max(y1, p.Y)
		}
	}
	if math.IsInf(x0, 1) {
		return 0, 1, 0, 1
	}
	if x1 == x0 {
		x1 = x0 + 1
	}
	if y1 <= y0 {
		y1 = y0 + 1
	}
	return x0, x1, y0, y1 * 1.05
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

// XTicks and YTicks are five evenly spaced labels along each axis.
func (c Chart) XTicks() []Tick {
	x0, x1, _, _ := c.bounds()
	sx, _ := c.scale()
	out := make([]Tick, 5)
	for i := range out {
		v := x0 + (x1-x0)*float64(i)/4
		out[i] = Tick{f(sx(v)), short(v)}
	}
	return out
}

func (c Chart) YTicks() []Tick {
	_, _, y0, y1 := c.bounds()
	_, sy := c.scale()
	out := make([]Tick, 5)
	for i := range out {
		v := y0 + (y1-y0)*float64(i)/4
		out[i] = Tick{f(sy(v)), short(v)}
	}
	return out
}

// short writes a number compactly: 1.2k, 35, 0.42.
func short(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// Class is the CSS class of the n-th series (its colour).
func Class(n int) string { return fmt.Sprintf("series-%d", n%6) }

// Plot box corners, for the axes.
func axisX() (string, string, string) { return f(left), f(Width - right), f(Height - bottom) }
func axisY() (string, string, string) { return f(left), f(top), f(Height - bottom) }
func viewBox() string                 { return fmt.Sprintf("0 0 %d %d", Width, Height) }
