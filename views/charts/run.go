package charts

import (
	"fmt"

	"github.com/ruckus/ruckus/app/store"
)

// RunCharts draws a run's charts from its samples and requests: throughput
// and latency over time, and the GPU and runtime readings when there are
// any.
func RunCharts(samples []store.SampleRow, lat []store.LatencyPoint) []Chart {
	tput := Series{Name: "output tokens/s"}
	var util, power, mem, running, waiting Series
	running.Name, waiting.Name = "running", "waiting"
	for _, s := range samples {
		at := fmt.Sprintf("%.0f s", s.Seconds)
		tput.Points = append(tput.Points, Point{X: s.Seconds, Y: s.Throughput, Label: fmt.Sprintf("%s: %.1f tokens/s, %d done", at, s.Throughput, s.Completed)})
		if s.GPUUtil != nil {
			util.Points = append(util.Points, Point{X: s.Seconds, Y: *s.GPUUtil, Label: fmt.Sprintf("%s: %.0f %%", at, *s.GPUUtil)})
		}
		if s.GPUPowerW != nil {
			power.Points = append(power.Points, Point{X: s.Seconds, Y: *s.GPUPowerW, Label: fmt.Sprintf("%s: %.0f W", at, *s.GPUPowerW)})
		}
		if s.GPUMemBytes != nil {
			gib := float64(*s.GPUMemBytes) / (1 << 30)
			mem.Points = append(mem.Points, Point{X: s.Seconds, Y: gib, Label: fmt.Sprintf("%s: %.1f GiB", at, gib)})
		}
		if s.Running != nil {
			running.Points = append(running.Points, Point{X: s.Seconds, Y: *s.Running, Label: fmt.Sprintf("%s: %.0f running", at, *s.Running)})
		}
		if s.Waiting != nil {
			waiting.Points = append(waiting.Points, Point{X: s.Seconds, Y: *s.Waiting, Label: fmt.Sprintf("%s: %.0f waiting", at, *s.Waiting)})
		}
	}
	ttft := Series{Name: "TTFT ms", Dots: true}
	e2e := Series{Name: "E2E ms", Dots: true}
	for _, p := range lat {
		ttft.Points = append(ttft.Points, Point{X: p.Seconds, Y: p.TTFTms, Label: fmt.Sprintf("%s: TTFT %.1f ms", p.CustomID, p.TTFTms)})
		e2e.Points = append(e2e.Points, Point{X: p.Seconds, Y: p.E2Ems, Label: fmt.Sprintf("%s: E2E %.1f ms", p.CustomID, p.E2Ems)})
	}
	out := []Chart{
		{ID: "throughput", Title: "Throughput over time", XLabel: "seconds", YLabel: "tokens/s", Series: []Series{tput}},
		{ID: "latency", Title: "Latency by send time", XLabel: "seconds", YLabel: "ms", Series: []Series{e2e, ttft}},
	}
	if len(util.Points) > 0 {
		out = append(out, Chart{ID: "gpu-util", Title: "GPU utilisation (mean)", XLabel: "seconds", YLabel: "%", Series: []Series{util}})
	}
	if len(power.Points) > 0 {
		out = append(out, Chart{ID: "gpu-power", Title: "GPU power (all GPUs)", XLabel: "seconds", YLabel: "W", Series: []Series{power}})
	}
	if len(mem.Points) > 0 {
		out = append(out, Chart{ID: "gpu-mem", Title: "GPU memory used (all GPUs)", XLabel: "seconds", YLabel: "GiB", Series: []Series{mem}})
	}
	if len(running.Points)+len(waiting.Points) > 0 {
		out = append(out, Chart{ID: "runtime-queue", Title: "Runtime requests (from /metrics)", XLabel: "seconds", YLabel: "requests", Series: []Series{running, waiting}})
	}
	return out
}
