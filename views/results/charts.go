package results

import (
	"fmt"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/charts"
)

// RunCharts draws a run's charts from its samples and requests: throughput
// and latency over time, and the GPU and runtime readings when there are
// any.
func RunCharts(samples []store.SampleRow, lat []store.LatencyPoint) []charts.Chart {
	tput := charts.Series{Name: "output tokens/s"}
	var util, power, mem, running, waiting charts.Series
	running.Name, waiting.Name = "running", "waiting"
	for _, s := range samples {
		at := fmt.Sprintf("%.0f s", s.Seconds)
		tput.Points = append(tput.Points, charts.Point{X: s.Seconds, Y: s.Throughput, Label: fmt.Sprintf("%s: %.1f tokens/s, %d done", at, s.Throughput, s.Completed)})
		if s.GPUUtil != nil {
			util.Points = append(util.Points, charts.Point{X: s.Seconds, Y: *s.GPUUtil, Label: fmt.Sprintf("%s: %.0f %%", at, *s.GPUUtil)})
		}
		if s.GPUPowerW != nil {
			power.Points = append(power.Points, charts.Point{X: s.Seconds, Y: *s.GPUPowerW, Label: fmt.Sprintf("%s: %.0f W", at, *s.GPUPowerW)})
		}
		if s.GPUMemBytes != nil {
			gib := float64(*s.GPUMemBytes) / (1 << 30)
			mem.Points = append(mem.Points, charts.Point{X: s.Seconds, Y: gib, Label: fmt.Sprintf("%s: %.1f GiB", at, gib)})
		}
		if s.Running != nil {
			running.Points = append(running.Points, charts.Point{X: s.Seconds, Y: *s.Running, Label: fmt.Sprintf("%s: %.0f running", at, *s.Running)})
		}
		if s.Waiting != nil {
			waiting.Points = append(waiting.Points, charts.Point{X: s.Seconds, Y: *s.Waiting, Label: fmt.Sprintf("%s: %.0f waiting", at, *s.Waiting)})
		}
	}
	ttft := charts.Series{Name: "TTFT ms", Dots: true}
	e2e := charts.Series{Name: "E2E ms", Dots: true}
	for _, p := range lat {
		ttft.Points = append(ttft.Points, charts.Point{X: p.Seconds, Y: p.TTFTms, Label: fmt.Sprintf("%s: TTFT %.1f ms", p.CustomID, p.TTFTms)})
		e2e.Points = append(e2e.Points, charts.Point{X: p.Seconds, Y: p.E2Ems, Label: fmt.Sprintf("%s: E2E %.1f ms", p.CustomID, p.E2Ems)})
	}
	out := []charts.Chart{
		{ID: "throughput", Title: "Throughput over time", XLabel: "seconds", YLabel: "tokens/s", Series: []charts.Series{tput}},
		{ID: "latency", Title: "Latency by send time", XLabel: "seconds", YLabel: "ms", Series: []charts.Series{e2e, ttft}},
	}
	if len(util.Points) > 0 {
		out = append(out, charts.Chart{ID: "gpu-util", Title: "GPU utilisation (mean)", XLabel: "seconds", YLabel: "%", Series: []charts.Series{util}})
	}
	if len(power.Points) > 0 {
		out = append(out, charts.Chart{ID: "gpu-power", Title: "GPU power (all GPUs)", XLabel: "seconds", YLabel: "W", Series: []charts.Series{power}})
	}
	if len(mem.Points) > 0 {
		out = append(out, charts.Chart{ID: "gpu-mem", Title: "GPU memory used (all GPUs)", XLabel: "seconds", YLabel: "GiB", Series: []charts.Series{mem}})
	}
	if len(running.Points)+len(waiting.Points) > 0 {
		out = append(out, charts.Chart{ID: "runtime-queue", Title: "Runtime requests (from /metrics)", XLabel: "seconds", YLabel: "requests", Series: []charts.Series{running, waiting}})
	}
	return out
}
