package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in    string
		total, idle uint64
		err         string
	}{
		// Linux 5.x: ten figures, guest and guest_nice left out of the total.
		{"modern", "cpu  100 5 50 800 20 3 2 1 7 9\ncpu0 50 2 25 400 10 1 1 0 0 0\n", 981, 820, ""},
		{"old kernel", "cpu 10 0 10 80\n", 100, 80, ""},
		{"no cpu line", "intr 1 2 3\n", 0, 0, "no cpu line"},
		{"short", "cpu 1 2 3\n", 0, 0, "want at least 4"},
		{"not a number", "cpu 1 x 3 4\n", 0, 0, "cpu field 2"},
		{"overflow", "cpu 18446744073709551615 1 0 0\n", 0, 0, "overflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Total != tc.total || got.Idle != tc.idle {
				t.Fatalf("got %+v, %v; want total %d idle %d", got, err, tc.total, tc.idle)
			}
		})
	}
}

func TestParseMeminfo(t *testing.T) {
	t.Parallel()
	m, err := ParseMeminfo(strings.NewReader("MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:   12000000 kB\n"))
	if err != nil || m.Total != 16000000*1024 || m.Available != 12000000*1024 || m.Used() != 4000000*1024 {
		t.Fatalf("got %+v %v", m, err)
	}
	for in, want := range map[string]string{
		"MemTotal: 5 kB\n":                     "missing",
		"MemTotal: 5 MB\nMemAvailable: 1 kB\n": "want a number of kB",
		"MemTotal: -5 kB\n":                    "want a number of kB",
		"MemTotal: 99999999999999999999 kB\n":  "want a number of kB",
	} {
		if _, err := ParseMeminfo(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
	// Available above total (a racing read) is no memory used, not a wrap.
	if (Memory{Total: 1, Available: 2}).Used() != 0 {
		t.Fatal("used wrapped")
	}
}

// procLine is a /proc/PID/stat line with the given fields.
func procLine(pid, ppid int, comm string, utime, stime uint64, rss int64) string {
	return fmt.Sprintf("%d (%s) S %d 1 1 0 -1 4194560 100 0 0 0 %d %d 0 0 20 0 1 0 100 1000000 %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		pid, comm, ppid, utime, stime, rss)
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	// A command name with spaces and parentheses: fields count from the last ')'.
	p, err := ParseProcStat([]byte(procLine(42, 7, "vllm (worker) 1", 150, 50, 1000)))
	if err != nil || p.PID != 42 || p.PPID != 7 || p.Ticks != 200 || p.RSSPages != 1000 {
		t.Fatalf("got %+v %v", p, err)
	}
	for _, bad := range []string{"", "42 vllm S 1", "x (a) S 1", "42 (a) S 1 2 3", strings.Repeat("9", maxLine+1),
		strings.Replace(procLine(42, 7, "a", 1, 1, 1), " 7 ", " -7 ", 1)} {
		if _, err := ParseProcStat([]byte(bad)); err == nil {
			t.Errorf("%.40q: no error", bad)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add("cpu  100 5 50 800 20 3 2 1 7 9\n")
	f.Add("cpu 1 2 3 4\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ParseStat(strings.NewReader(in))
		if err == nil && c.Idle > c.Total {
			t.Fatalf("idle %d above total %d", c.Idle, c.Total)
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add("MemTotal: 10 kB\nMemAvailable: 5 kB\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ParseMeminfo(strings.NewReader(in))
		if err == nil && (m.Total > maxKiB*1024 || m.Available > maxKiB*1024) {
			t.Fatalf("unbounded %+v", m)
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte(procLine(42, 7, "a (b)", 1, 2, 3)))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ParseProcStat(in)
		if err == nil && (p.PID < 1 || p.PPID < 0) {
			t.Fatalf("accepted %+v", p)
		}
	})
}

// fakeProc is a procfs with a machine and a process tree, rewritten
// between readings.
type fakeProc struct {
	t    *testing.T
	root string
}

func (f fakeProc) write(name, content string) {
	f.t.Helper()
	path := filepath.Join(f.root, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// The machine's and the tree's shares are differences between readings,
// on one scale: the tree (runtime 10 with children 11 and 12, not the
// unrelated 13) used 150 of the 1000 jiffies that passed, the machine 400.
func TestSamplerSharesOfOneScale(t *testing.T) {
	t.Parallel()
	p := fakeProc{t, t.TempDir()}
	p.write("meminfo", "MemTotal: 1000 kB\nMemAvailable: 250 kB\n")
	p.write("self", "") // not a pid: skipped
	tree := func(runtime, child, grandchild uint64) {
		p.write("10/stat", procLine(10, 1, "runtime", runtime, 0, 100))
		p.write("11/stat", procLine(11, 10, "worker", child, 0, 50))
		p.write("12/stat", procLine(12, 11, "grand (child)", grandchild, 0, 25))
		p.write("13/stat", procLine(13, 1, "other", 999999, 0, 999))
	}
	p.write("stat", "cpu 100 0 100 800 0 0 0 0 0 0\n")
	tree(10, 10, 10)
	s := &Sampler{Proc: p.root, PID: 10, PageSize: 4096}
	first := s.Read()
	if first.CPUPercent != nil || first.ProcCPUPercent != nil {
		t.Fatal("a first reading has no shares")
	}
	if *first.MemUsedBytes != 750*1024 || *first.MemTotalBytes != 1000*1024 || *first.ProcRSSBytes != 175*4096 || first.ProcCount != 3 {
		t.Fatalf("first: mem %d/%d rss %d procs %d", *first.MemUsedBytes, *first.MemTotalBytes, *first.ProcRSSBytes, first.ProcCount)
	}
	p.write("stat", "cpu 300 0 300 1400 0 0 0 0 0 0\n") // +1000 jiffies, 600 idle
	tree(60, 60, 60)
	second := s.Read()
	if *second.CPUPercent != 40 || *second.ProcCPUPercent != 15 {
		t.Fatalf("second: cpu %v, process %v; want 40 and 15", *second.CPUPercent, *second.ProcCPUPercent)
	}
	// A child that exits takes its time with it: the share is 0, not negative.
	p.write("stat", "cpu 400 0 400 1600 0 0 0 0 0 0\n")
	if err := os.RemoveAll(filepath.Join(p.root, "12")); err != nil {
		t.Fatal(err)
	}
	third := s.Read()
	if *third.ProcCPUPercent != 0 || third.ProcCount != 2 {
		t.Fatalf("third: process %v over %d processes", *third.ProcCPUPercent, third.ProcCount)
	}
	// The runtime gone: no process figures, the machine's still there.
	if err := os.RemoveAll(filepath.Join(p.root, "10")); err != nil {
		t.Fatal(err)
	}
	p.write("stat", "cpu 500 0 500 1800 0 0 0 0 0 0\n")
	gone := s.Read()
	if gone.ProcRSSBytes != nil || gone.ProcCPUPercent != nil || gone.CPUPercent == nil {
		t.Fatalf("gone: %+v", gone)
	}

	var m Meter
	for _, x := range []Sample{first, second, third, gone} {
		m.Add(x)
	}
	sum := m.Summary("runtime")
	if sum.Samples != 4 || *sum.PeakCPUPercent != 50 || *sum.ProcPeakCPUPercent != 15 || *sum.ProcMeanCPUPercent != 7.5 ||
		*sum.ProcPeakRSSBytes != 175*4096 || *sum.PeakMemUsed != 750*1024 || sum.Process != "runtime" {
		t.Fatalf("summary %+v", sum)
	}
	// Nothing of a process measured: no process named.
	var none Meter
	none.Add(gone)
	if s := none.Summary("runtime"); s.Process != "" || s.ProcPeakRSSBytes != nil {
		t.Fatalf("summary without a process %+v", s)
	}
}

// On the real /proc, this test's own process is a tree that burns CPU
// between two readings: both shares are measured, and the process's is
// within the machine's.
func TestSamplerOnThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc here")
	}
	s := &Sampler{PID: os.Getpid()}
	s.Read()
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	got := s.Read()
	if got.CPUPercent == nil || got.ProcCPUPercent == nil || got.ProcRSSBytes == nil || got.MemTotalBytes == nil {
		t.Fatalf("unmeasured: %+v", got)
	}
	if *got.ProcCPUPercent <= 0 || *got.ProcCPUPercent > *got.CPUPercent+1e-9 || *got.ProcRSSBytes <= 0 {
		t.Fatalf("process %v %% of machine %v %%, rss %d", *got.ProcCPUPercent, *got.CPUPercent, *got.ProcRSSBytes)
	}
}
