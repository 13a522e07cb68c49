package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// On a machine shared with other work, requests/s swing with what else
// runs; the CPU time a build spends per poll does not, so the live part
// reports it too: the server process's, and that of the PostgreSQL
// backends connected to the build's database (from /proc; Linux only).

// clockTick is the kernel's clock tick (USER_HZ), 100 on Linux.
const clockTick = 10 * time.Millisecond

// cpuUsed is the user and system time process pid has used (0 when it
// cannot be read).
func cpuUsed(pid int) time.Duration {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// Fields after the command's closing parenthesis: state is the 3rd
	// field of the line, utime and stime the 14th and 15th.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0
	}
	f := strings.Fields(string(raw[end+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick
}

// backendsCPU is the CPU time used so far by the PostgreSQL backends
// connected to database db (their title names it: "postgres: user db …").
func backendsCPU(db string) time.Duration {
	dirs, _ := os.ReadDir("/proc")
	var total time.Duration
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		title, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(title, []byte("postgres: ")) {
			continue
		}
		if f := strings.Fields(string(title)); len(f) >= 3 && f[2] == db {
			total += cpuUsed(pid)
		}
	}
	return total
}

// cpuMeter reads a build's CPU time: its server's and its database's.
type cpuMeter struct {
	pid int    // the server process; 0 when not ours (--url)
	db  string // the database's name
}

func (m cpuMeter) read() (server, database time.Duration) {
	if m.pid != 0 {
		server = cpuUsed(m.pid)
	}
	return server, backendsCPU(m.db)
}
