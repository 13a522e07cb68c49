package agent

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/agentd/gpu"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// detectHardware reads the CPU and memory from /proc and the GPUs through
// nv (nil, or without GPUs: a CPU-only machine).
func detectHardware(nv *gpu.NVML) (jobs.Hardware, error) {
	h := jobs.Hardware{CPUCores: runtime.NumCPU(), GPUs: []jobs.GPU{}}
	h.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		n, _ := strconv.ParseUint(strings.Fields(kb)[0], 10, 64)
		h.MemoryBytes = n * 1024
	}
	if nv == nil || !nv.Available() {
		return h, nil
	}
	info, err := nv.Detect()
	if err != nil {
		// A GPU node that cannot read its GPUs must not pass for CPU-only.
		return h, fmt.Errorf("reading the GPUs through NVML: %w", err)
	}
	info.Fill(&h)
	return h, nil
}

// procField returns the value of the first "key: value" line with key.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// profileOf is the hardware profile an agent registers under.
func profileOf(h jobs.Hardware) store.HardwareProfile {
	p := store.HardwareProfile{Slug: h.ProfileSlug(), GPUCount: len(h.GPUs), CPUCores: h.CPUCores}
	if len(h.GPUs) > 0 {
		p.GPUName = h.GPUs[0].Name
		p.GPUMemoryBytes = int64(h.GPUs[0].MemoryBytes)
	}
	return p
}
