package charts

import (
	"fmt"

	"github.com/ruckus/ruckus/app/store"
)

// RunCharts draws a run's charts from its samples and requests: throughput
// and latency over time, and the node's, the GPUs' and the runtime's
// readings when there are any. Simulated GPU readings (--sim-gpu) say so
// in their charts' titles.
func RunCharts(samples []store.SampleRow, lat []store.LatencyPoint) []Chart {
	tput := Series{Name: "output tokens/s"}
	var util, power, mem, running, waiting Series
	running.Name, waiting.Name = "running", "waiting"
	simulated := false
	for _, s := range samples {
		simulated = simulated || s.GPUSimulated
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
	out = append(out, nodeCharts(samples)...)
	gpuTitle := func(t string) string {
		if simulated {
			return t + " — simulated from the load, not measured"
		}
		return t
	}
	if len(util.Points) > 0 {
		out = append(out, Chart{ID: "gpu-util", Title: gpuTitle("GPU utilisation (mean)"), XLabel: "seconds", YLabel: "%", Series: []Series{util}})
	}
	if len(power.Points) > 0 {
		out = append(out, Chart{ID: "gpu-power", Title: gpuTitle("GPU power (all GPUs)"), XLabel: "seconds", YLabel: "W", Series: []Series{power}})
	}
	if len(mem.Points) > 0 {
		out = append(out, Chart{ID: "gpu-mem", Title: gpuTitle("GPU memory used (all GPUs)"), XLabel: "seconds", YLabel: "GiB", Series: []Series{mem}})
	}
	if len(running.Points)+len(waiting.Points) > 0 {
		out = append(out, Chart{ID: "runtime-queue", Title: "Runtime requests (from /metrics)", XLabel: "seconds", YLabel: "requests", Series: []Series{running, waiting}})
	}
	return out
}

// maxGapPoints bounds a request's gap chart; a longer stream is drawn in
// buckets, each at its largest gap so a stall is never thinned away.
const maxGapPoints = 400

// GapChart draws one request's inter-token latencies in stream order: the
// y value is each token's share of its event's gap, in ms (gaps in µs,
// tokens per event nil when each carried one).
func GapChart(gapsMicros, tokens []int32) Chart {
	s := Series{Name: "inter-token latency ms"}
	step := (len(gapsMicros) + maxGapPoints - 1) / maxGapPoints
	token := 1 // the first event's tokens arrive with TTFT
	for start := 0; start < len(gapsMicros); start += step {
		end := min(start+step, len(gapsMicros))
		at, worst, n := token, -1.0, 1
		for i := start; i < end; i++ {
			k := int32(1)
			if tokens != nil {
				k = max(tokens[i], 1)
			}
			if v := float64(gapsMicros[i]) / float64(k) / 1000; v > worst {
				worst, at, n = v, token+1, int(k)
			}
			token += int(k)
		}
		label := fmt.Sprintf("token %d: %.2f ms", at, worst)
		if n > 1 {
			label = fmt.Sprintf("tokens %d–%d: %.2f ms each (one event)", at, at+n-1, worst)
		}
		s.Points = append(s.Points, Point{X: float64(at), Y: worst, Label: label})
	}
	return Chart{ID: "item-itl", Title: "Inter-token latency through the stream", XLabel: "output token", YLabel: "ms", Series: []Series{s}}
}

// nodeCharts draws the node's CPU utilisation and memory with the
// runtime's process tree's share beside them; none when the node was not
// sampled.
func nodeCharts(samples []store.SampleRow) []Chart {
	cpu, proc := Series{Name: "node CPU %"}, Series{Name: "runtime processes CPU %"}
	mem, rss := Series{Name: "node memory used GiB"}, Series{Name: "runtime processes resident GiB"}
	for _, s := range samples {
		at := fmt.Sprintf("%.0f s", s.Seconds)
		if s.CPUUtil != nil {
			cpu.Points = append(cpu.Points, Point{X: s.Seconds, Y: *s.CPUUtil, Label: fmt.Sprintf("%s: node %.0f %% of all CPUs", at, *s.CPUUtil)})
		}
		if s.ProcCPUUtil != nil {
			proc.Points = append(proc.Points, Point{X: s.Seconds, Y: *s.ProcCPUUtil, Label: fmt.Sprintf("%s: runtime %.0f %% of all CPUs", at, *s.ProcCPUUtil)})
		}
		if s.MemUsedBytes != nil {
			gib := float64(*s.MemUsedBytes) / (1 << 30)
			mem.Points = append(mem.Points, Point{X: s.Seconds, Y: gib, Label: fmt.Sprintf("%s: node %.1f GiB used", at, gib)})
		}
		if s.ProcRSSBytes != nil {
			gib := float64(*s.ProcRSSBytes) / (1 << 30)
			rss.Points = append(rss.Points, Point{X: s.Seconds, Y: gib, Label: fmt.Sprintf("%s: runtime %.2f GiB resident", at, gib)})
		}
	}
	var out []Chart
	if len(cpu.Points)+len(proc.Points) > 0 {
		out = append(out, Chart{ID: "node-cpu", Title: "Node CPU utilisation", XLabel: "seconds", YLabel: "%", Series: nonEmpty(cpu, proc)})
	}
	if len(mem.Points)+len(rss.Points) > 0 {
		out = append(out, Chart{ID: "node-mem", Title: "Node memory", XLabel: "seconds", YLabel: "GiB", Series: nonEmpty(mem, rss)})
	}
	return out
}

// nonEmpty is the series that have points.
func nonEmpty(series ...Series) []Series {
	var out []Series
	for _, s := range series {
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	return out
}
