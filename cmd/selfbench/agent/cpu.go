package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// processCPU is this process's user plus system CPU time so far, from
// getrusage (microsecond resolution).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is the unit of /proc's CPU times: USER_HZ, 100 on every Linux
// architecture Go supports (the kernel's ABI keeps it there whatever
// CONFIG_HZ is).
const clockTick = 10 * time.Millisecond

// procCPU is another process's user plus system CPU time so far, all its
// threads together, from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseProcStat(b)
}

// parseProcStat reads utime and stime (fields 14 and 15) from a
// /proc/PID/stat line. The command name (field 2) is in parentheses and
// may hold spaces, so the fields are counted from its closing one.
func parseProcStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat line without a command name: %.60q", b)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat line with %d fields after the command name", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		v, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat CPU time %q: %w", s, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * clockTick, nil
}

// machineBusy is the CPU time all cores have spent on anything but idling
// and waiting for I/O since boot, from /proc/stat.
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseMachineStat(b)
}

// parseMachineStat reads the "cpu" line of /proc/stat: user nice system
// idle iowait irq softirq steal (guest time is already in user).
func parseMachineStat(b []byte) (time.Duration, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, fmt.Errorf("/proc/stat does not start with the cpu line: %.60q", line)
	}
	var busy int64
	for i, s := range f[1:9] {
		v, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat cpu field %d %q: %w", i+1, s, err)
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return time.Duration(busy) * clockTick, nil
}
