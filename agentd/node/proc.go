package node

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLine bounds one line of a /proc file; the kernel's lines are far
// shorter, and a longer one is refused rather than buffered.
const maxLine = 4096

// CPUTimes is the machine's CPU time so far in jiffies, summed over its
// CPUs, from /proc/stat's first line.
type CPUTimes struct {
	// Total is user + nice + system + idle + iowait + irq + softirq +
	// steal (guest time is already counted in user and nice).
	Total uint64
	// Idle is idle + iowait.
	Idle uint64
}

// ParseStat reads /proc/stat's aggregate "cpu" line.
func ParseStat(r io.Reader) (CPUTimes, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxLine)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		// user nice system idle [iowait irq softirq steal guest guest_nice]:
		// kernels before 2.6 give only the first four.
		if len(f) < 5 {
			return CPUTimes{}, fmt.Errorf("/proc/stat: the cpu line has %d fields, want at least 4 figures", len(f)-1)
		}
		var v [8]uint64
		for i := 0; i < 8 && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: cpu field %d: %w", i+1, err)
			}
			v[i] = n
		}
		var t CPUTimes
		for _, n := range v {
			if t.Total+n < t.Total {
				return CPUTimes{}, errors.New("/proc/stat: the cpu times overflow")
			}
			t.Total += n
		}
		t.Idle = v[3] + v[4]
		return t, nil
	}
	if err := sc.Err(); err != nil {
		return CPUTimes{}, fmt.Errorf("/proc/stat: %w", err)
	}
	return CPUTimes{}, errors.New("/proc/stat: no cpu line")
}

// Memory is the machine's memory in bytes from /proc/meminfo.
type Memory struct {
	Total     uint64
	Available uint64
}

// Used is what the system uses: total less what is available to start
// new work without swapping (the kernel's MemAvailable estimate, which
// counts reclaimable caches as available).
func (m Memory) Used() uint64 {
	if m.Available > m.Total {
		return 0
	}
	return m.Total - m.Available
}

// maxKiB bounds a meminfo figure (1 EiB): anything above is not a
// machine's memory.
const maxKiB = 1 << 50

// ParseMeminfo reads MemTotal and MemAvailable (in kB, which the kernel
// means as KiB) from /proc/meminfo.
func ParseMeminfo(r io.Reader) (Memory, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxLine)
	var m Memory
	var total, avail bool
	for sc.Scan() && !(total && avail) {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "MemTotal" && k != "MemAvailable") {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return Memory{}, fmt.Errorf("/proc/meminfo: %s is %q, want a number of kB", k, strings.TrimSpace(v))
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || n > maxKiB {
			return Memory{}, fmt.Errorf("/proc/meminfo: %s is %q, want a number of kB", k, f[0])
		}
		if k == "MemTotal" {
			m.Total, total = n*1024, true
		} else {
			m.Available, avail = n*1024, true
		}
	}
	if err := sc.Err(); err != nil {
		return Memory{}, fmt.Errorf("/proc/meminfo: %w", err)
	}
	if !total || !avail {
		return Memory{}, errors.New("/proc/meminfo: MemTotal or MemAvailable missing")
	}
	return m, nil
}

// Proc is one process's line of /proc/PID/stat, the fields used here.
type Proc struct {
	PID, PPID int
	// Ticks is its user and system time in jiffies (utime + stime).
	Ticks uint64
	// RSSPages is its resident set in pages.
	RSSPages uint64
}

// ParseProcStat reads /proc/PID/stat. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func ParseProcStat(b []byte) (Proc, error) {
	if len(b) > maxLine {
		return Proc{}, fmt.Errorf("stat: %d bytes, more than %d", len(b), maxLine)
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return Proc{}, errors.New("stat: no (command) field")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil || pid < 1 {
		return Proc{}, fmt.Errorf("stat: pid %q", strings.TrimSpace(string(b[:open])))
	}
	// After ')': state(3) ppid(4) … utime(14) stime(15) … rss(24).
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 22 {
		return Proc{}, fmt.Errorf("stat: %d fields after the command, want at least 22", len(f))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid < 0 {
		return Proc{}, fmt.Errorf("stat: ppid %q", f[1])
	}
	p := Proc{PID: pid, PPID: ppid}
	utime, err1 := strconv.ParseUint(f[11], 10, 63)
	stime, err2 := strconv.ParseUint(f[12], 10, 63)
	if err := errors.Join(err1, err2); err != nil {
		return Proc{}, fmt.Errorf("stat: utime/stime: %w", err)
	}
	p.Ticks = utime + stime
	// rss is signed in the kernel's format; a negative one counts as 0.
	rss, err := strconv.ParseInt(f[21], 10, 64)
	if err != nil {
		return Proc{}, fmt.Errorf("stat: rss %q", f[21])
	}
	p.RSSPages = uint64(max(rss, 0))
	return p, nil
}
