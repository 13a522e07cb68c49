package charts

import (
	"bytes"
	"context"
	"testing"
	"time"
)

func pointsChart(n int) Chart {
	s := Series{Name: "latency", Dots: true}
	for i := range n {
		s.Points = append(s.Points, Point{X: float64(i), Y: float64(i % 97), Label: "p"})
	}
	return Chart{ID: "t", Title: "t", XLabel: "s", YLabel: "ms", Series: []Series{s}}
}

// drawTime is the shortest of five drawings of c.
func drawTime(t *testing.T, c Chart) time.Duration {
	t.Helper()
	best := time.Duration(1 << 62)
	for range 5 {
		var buf bytes.Buffer
		start := time.Now()
		if err := Line(c).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	return best
}

// Drawing a chart takes time in proportion to its points: its axes are
// computed once, not for every point's position (which made sixteen times
// the points take about 256 times as long; the bound leaves room for a
// busy machine).
func TestDrawingAChartIsLinearInItsPoints(t *testing.T) {
	small, large := drawTime(t, pointsChart(1000)), drawTime(t, pointsChart(16000))
	ratio := float64(large) / float64(small)
	t.Logf("16× the points: %.1f× the time (%v vs %v)", ratio, large, small)
	if ratio > 64 {
		t.Errorf("16× the points took %.0f× as long to draw (%v vs %v): quadratic", ratio, large, small)
	}
	// Measured changes nothing drawn: every point is where its axes
	// computed afresh put it.
	c := pointsChart(50)
	var drawn bytes.Buffer
	if err := Line(c).Render(context.Background(), &drawn); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Series[0].Points {
		x, y := c.Dot(p)
		if !bytes.Contains(drawn.Bytes(), []byte(`cx="`+x+`" cy="`+y+`"`)) {
			t.Fatalf("point %v drawn elsewhere than at %s,%s", p, x, y)
		}
	}
}
