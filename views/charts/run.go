package charts

import (
	"context"
	"fmt"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

// RunCharts draws a run's charts from its samples and requests: throughput
// and latency over time, and the node's, the GPUs' and the runtime's
// readings when there are any. Simulated GPU readings (--sim-gpu) say so
// in their charts' titles. Titles, axes and labels are in the language of
// ctx.
func RunCharts(ctx context.Context, samples []store.SampleRow, lat []store.LatencyPoint) []Chart {
	loc := i18n.From(ctx)
	tput := Series{Name: loc.T("chart.output_tps")}
	var util, power, mem, running, waiting Series
	running.Name, waiting.Name = loc.T("chart.running"), loc.T("chart.waiting")
	simulated := false
	for _, s := range samples {
		simulated = simulated || s.GPUSimulated
		at := fmt.Sprintf("%.0f s", s.Seconds)
		tput.Points = append(tput.Points, Point{X: s.Seconds, Y: s.Throughput,
			Label: loc.T("chart.tput_point", "At", at, "TPS", loc.Mark(fmt.Sprintf("%.1f", s.Throughput)), "Done", s.Completed)})
		if s.GPUUtil != nil {
			util.Points = append(util.Points, Point{X: s.Seconds, Y: *s.GPUUtil, Label: fmt.Sprintf("%s: %.0f %%", at, *s.GPUUtil)})
		}
		if s.GPUPowerW != nil {
			power.Points = append(power.Points, Point{X: s.Seconds, Y: *s.GPUPowerW, Label: fmt.Sprintf("%s: %.0f W", at, *s.GPUPowerW)})
		}
		if s.GPUMemBytes != nil {
			gib := float64(*s.GPUMemBytes) / (1 << 30)
			mem.Points = append(mem.Points, Point{X: s.Seconds, Y: gib, Label: fmt.Sprintf("%s: %s GiB", at, loc.Mark(fmt.Sprintf("%.1f", gib)))})
		}
		if s.Running != nil {
			running.Points = append(running.Points, Point{X: s.Seconds, Y: *s.Running, Label: loc.T("chart.running_point", "At", at, "N", fmt.Sprintf("%.0f", *s.Running))})
		}
		if s.Waiting != nil {
			waiting.Points = append(waiting.Points, Point{X: s.Seconds, Y: *s.Waiting, Label: loc.T("chart.waiting_point", "At", at, "N", fmt.Sprintf("%.0f", *s.Waiting))})
		}
	}
	ttft := Series{Name: "TTFT ms", Dots: true}
	e2e := Series{Name: "E2E ms", Dots: true}
	for _, p := range lat {
		ttft.Points = append(ttft.Points, Point{X: p.Seconds, Y: p.TTFTms, Label: fmt.Sprintf("%s: TTFT %s ms", p.CustomID, loc.Mark(fmt.Sprintf("%.1f", p.TTFTms)))})
		e2e.Points = append(e2e.Points, Point{X: p.Seconds, Y: p.E2Ems, Label: fmt.Sprintf("%s: E2E %s ms", p.CustomID, loc.Mark(fmt.Sprintf("%.1f", p.E2Ems)))})
	}
	seconds := loc.T("chart.seconds")
	out := []Chart{
		{ID: "throughput", Title: loc.T("chart.throughput"), XLabel: seconds, YLabel: "tokens/s", Series: []Series{tput}},
		{ID: "latency", Title: loc.T("chart.latency"), XLabel: seconds, YLabel: "ms", Series: []Series{e2e, ttft}},
	}
	out = append(out, nodeCharts(loc, samples)...)
	gpuTitle := func(key string) string {
		if simulated {
			return loc.T("chart.simulated", "Title", loc.T(key))
		}
		return loc.T(key)
	}
	if len(util.Points) > 0 {
		out = append(out, Chart{ID: "gpu-util", Title: gpuTitle("chart.gpu_util"), XLabel: seconds, YLabel: "%", Series: []Series{util}})
	}
	if len(power.Points) > 0 {
		out = append(out, Chart{ID: "gpu-power", Title: gpuTitle("chart.gpu_power"), XLabel: seconds, YLabel: "W", Series: []Series{power}})
	}
	if len(mem.Points) > 0 {
		out = append(out, Chart{ID: "gpu-mem", Title: gpuTitle("chart.gpu_mem"), XLabel: seconds, YLabel: "GiB", Series: []Series{mem}})
	}
	if len(running.Points)+len(waiting.Points) > 0 {
		out = append(out, Chart{ID: "runtime-queue", Title: loc.T("chart.runtime_queue"), XLabel: seconds, YLabel: loc.T("chart.requests"), Series: []Series{running, waiting}})
	}
	return out
}

// maxGapPoints bounds a request's gap chart; a longer stream is drawn in
// buckets, each at its largest gap so a stall is never thinned away.
const maxGapPoints = 400

// GapChart draws one request's inter-token latencies in stream order: the
// y value is each token's share of its event's gap, in ms (gaps in µs,
// tokens per event nil when each carried one), in the language of ctx.
func GapChart(ctx context.Context, gapsMicros, tokens []int32) Chart {
	loc := i18n.From(ctx)
	s := Series{Name: loc.T("chart.itl_series")}
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
		ms := loc.Mark(fmt.Sprintf("%.2f", worst))
		label := loc.T("chart.itl_point", "Token", at, "Ms", ms)
		if n > 1 {
			label = loc.T("chart.itl_event", "From", at, "To", at+n-1, "Ms", ms)
		}
		s.Points = append(s.Points, Point{X: float64(at), Y: worst, Label: label})
	}
	return Chart{ID: "item-itl", Title: loc.T("chart.itl"), XLabel: loc.T("chart.output_token"), YLabel: "ms", Series: []Series{s}}
}

// nodeCharts draws the node's CPU utilisation and memory with the
// runtime's process tree's share beside them; none when the node was not
// sampled.
func nodeCharts(loc *i18n.Localizer, samples []store.SampleRow) []Chart {
	cpu, proc := Series{Name: loc.T("chart.node_cpu_series")}, Series{Name: loc.T("chart.proc_cpu_series")}
	mem, rss := Series{Name: loc.T("chart.node_mem_series")}, Series{Name: loc.T("chart.proc_rss_series")}
	for _, s := range samples {
		at := fmt.Sprintf("%.0f s", s.Seconds)
		if s.CPUUtil != nil {
			cpu.Points = append(cpu.Points, Point{X: s.Seconds, Y: *s.CPUUtil, Label: loc.T("chart.node_cpu_point", "At", at, "Pct", fmt.Sprintf("%.0f", *s.CPUUtil))})
		}
		if s.ProcCPUUtil != nil {
			proc.Points = append(proc.Points, Point{X: s.Seconds, Y: *s.ProcCPUUtil, Label: loc.T("chart.proc_cpu_point", "At", at, "Pct", fmt.Sprintf("%.0f", *s.ProcCPUUtil))})
		}
		if s.MemUsedBytes != nil {
			gib := float64(*s.MemUsedBytes) / (1 << 30)
			mem.Points = append(mem.Points, Point{X: s.Seconds, Y: gib, Label: loc.T("chart.node_mem_point", "At", at, "GiB", loc.Mark(fmt.Sprintf("%.1f", gib)))})
		}
		if s.ProcRSSBytes != nil {
			gib := float64(*s.ProcRSSBytes) / (1 << 30)
			rss.Points = append(rss.Points, Point{X: s.Seconds, Y: gib, Label: loc.T("chart.proc_rss_point", "At", at, "GiB", loc.Mark(fmt.Sprintf("%.2f", gib)))})
		}
	}
	var out []Chart
	if len(cpu.Points)+len(proc.Points) > 0 {
		out = append(out, Chart{ID: "node-cpu", Title: loc.T("chart.node_cpu"), XLabel: loc.T("chart.seconds"), YLabel: "%", Series: nonEmpty(cpu, proc)})
	}
	if len(mem.Points)+len(rss.Points) > 0 {
		out = append(out, Chart{ID: "node-mem", Title: loc.T("chart.node_mem"), XLabel: loc.T("chart.seconds"), YLabel: "GiB", Series: nonEmpty(mem, rss)})
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
