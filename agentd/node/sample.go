package node

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// maxProcs bounds how many processes one reading walks, so a machine with
// a runaway fork does not make each sample take seconds.
const maxProcs = 65536

// Sample is the machine and the runtime's process tree at one moment,
// as shares since the previous reading. A figure that could not be read,
// or that needs a previous reading (the first sample's CPU), is nil:
// unmeasured is not zero.
type Sample struct {
	At time.Time
	// CPUPercent is the machine's CPU utilisation, 0–100 % of all CPUs.
	CPUPercent *float64
	// MemUsedBytes and MemTotalBytes are the system's memory in use (total
	// less available) and its total.
	MemUsedBytes  *int64
	MemTotalBytes *int64
	// ProcCPUPercent is the process tree's share of all CPUs, 0–100 %, on
	// the machine's scale; ProcRSSBytes its resident memory; ProcCount how
	// many processes it had. Nil (0) without a process to watch or once
	// it has gone.
	ProcCPUPercent *float64
	ProcRSSBytes   *int64
	ProcCount      int
}

// Sampler reads the machine, and the process tree under PID, from Proc.
type Sampler struct {
	// Proc is the procfs root; "" means /proc.
	Proc string
	// PID is the root of the process tree to watch (the launched
	// runtime); 0 watches none.
	PID int
	// PageSize turns resident pages into bytes; 0 means os.Getpagesize().
	PageSize int

	prevCPU  *CPUTimes
	prevTree *uint64
}

func (s *Sampler) root() string {
	if s.Proc == "" {
		return "/proc"
	}
	return s.Proc
}

// Read takes one Sample now. The first call gives no CPU shares (they
// are differences); each later one gives the shares since the previous.
func (s *Sampler) Read() Sample {
	out := Sample{At: time.Now()}
	cpu, cpuErr := readStat(s.root())
	if mem, err := readMeminfo(s.root()); err == nil && mem.Total > 0 {
		used, total := int64(mem.Used()), int64(mem.Total)
		out.MemUsedBytes, out.MemTotalBytes = &used, &total
	}
	var ticks *uint64
	if s.PID > 0 {
		if t, ok := s.readTree(&out); ok {
			ticks = &t
		}
	}
	if cpuErr != nil {
		s.prevCPU, s.prevTree = nil, nil
		return out
	}
	if p := s.prevCPU; p != nil && cpu.Total > p.Total {
		dt := float64(cpu.Total - p.Total)
		busy := dt - float64(sub(cpu.Idle, p.Idle))
		pct := clampPercent(100 * busy / dt)
		out.CPUPercent = &pct
		if ticks != nil && s.prevTree != nil {
			proc := clampPercent(100 * float64(sub(*ticks, *s.prevTree)) / dt)
			out.ProcCPUPercent = &proc
		}
	}
	s.prevCPU, s.prevTree = &cpu, ticks
	return out
}

// readTree sums the process tree under s.PID into out and returns its
// CPU ticks; false when the root process is not there.
func (s *Sampler) readTree(out *Sample) (uint64, bool) {
	entries, err := os.ReadDir(s.root())
	if err != nil {
		return 0, false
	}
	children := map[int][]Proc{}
	var root *Proc
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid < 1 {
			continue
		}
		if n++; n > maxProcs {
			break
		}
		b, err := os.ReadFile(filepath.Join(s.root(), e.Name(), "stat"))
		if err != nil {
			continue // it exited meanwhile
		}
		p, err := ParseProcStat(b)
		if err != nil || p.PID != pid {
			continue
		}
		if pid == s.PID {
			root = &p
			continue
		}
		children[p.PPID] = append(children[p.PPID], p)
	}
	if root == nil {
		return 0, false
	}
	page := s.PageSize
	if page <= 0 {
		page = os.Getpagesize()
	}
	ticks, pages, count := root.Ticks, root.RSSPages, 1
	queue := []int{root.PID}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			ticks, pages, count = ticks+c.Ticks, pages+c.RSSPages, count+1
			queue = append(queue, c.PID)
		}
		delete(children, pid) // a cycle (pid reuse mid-walk) is walked once
	}
	rss := int64(min(pages*uint64(page), 1<<62))
	out.ProcRSSBytes, out.ProcCount = &rss, count
	return ticks, true
}

// Run reads at once, then every interval, until ctx ends, handing each
// Sample to fn on Run's goroutine.
func (s *Sampler) Run(ctx context.Context, interval time.Duration, fn func(Sample)) {
	if interval <= 0 {
		interval = time.Second
	}
	fn(s.Read())
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(s.Read())
		}
	}
}

func readStat(root string) (CPUTimes, error)  { return readProc(root, "stat", ParseStat) }
func readMeminfo(root string) (Memory, error) { return readProc(root, "meminfo", ParseMeminfo) }

// readProc parses the file name of the procfs at root.
func readProc[T any](root, name string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(filepath.Join(root, name))
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return parse(f)
}

// sub is a − b, 0 when a counter went backwards.
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func clampPercent(v float64) float64 { return min(max(v, 0), 100) }

// Meter accumulates Samples into a Summary.
type Meter struct {
	n                         int
	cpuN, memN, procN, rssN   int
	cpuSum, memSum, procSum   float64
	cpuPeak, procPeak         float64
	memPeak, memTotal, rssMax int64
}

// Add counts one sample.
func (m *Meter) Add(s Sample) {
	m.n++
	if s.CPUPercent != nil {
		m.cpuN++
		m.cpuSum += *s.CPUPercent
		m.cpuPeak = max(m.cpuPeak, *s.CPUPercent)
	}
	if s.MemUsedBytes != nil && s.MemTotalBytes != nil {
		m.memN++
		m.memSum += float64(*s.MemUsedBytes)
		m.memPeak = max(m.memPeak, *s.MemUsedBytes)
		m.memTotal = *s.MemTotalBytes
	}
	if s.ProcCPUPercent != nil {
		m.procN++
		m.procSum += *s.ProcCPUPercent
		m.procPeak = max(m.procPeak, *s.ProcCPUPercent)
	}
	if s.ProcRSSBytes != nil {
		m.rssN++
		m.rssMax = max(m.rssMax, *s.ProcRSSBytes)
	}
}

// Summary is what was added so far; process names the watched process
// (see jobs.NodeSummary.Process) and is kept only when it was measured.
func (m *Meter) Summary(process string) jobs.NodeSummary {
	out := jobs.NodeSummary{Samples: m.n}
	if m.cpuN > 0 {
		mean, peak := m.cpuSum/float64(m.cpuN), m.cpuPeak
		out.MeanCPUPercent, out.PeakCPUPercent = &mean, &peak
	}
	if m.memN > 0 {
		mean, peak, total := int64(m.memSum/float64(m.memN)), m.memPeak, m.memTotal
		out.MeanMemUsed, out.PeakMemUsed, out.MemTotalBytes = &mean, &peak, &total
	}
	if m.procN > 0 {
		mean, peak := m.procSum/float64(m.procN), m.procPeak
		out.ProcMeanCPUPercent, out.ProcPeakCPUPercent = &mean, &peak
	}
	if m.rssN > 0 {
		rss := m.rssMax
		out.ProcPeakRSSBytes = &rss
	}
	if m.procN > 0 || m.rssN > 0 {
		out.Process = process
	}
	return out
}
