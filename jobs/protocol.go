// Package jobs is the contract between the ruckus server and agentd: the
// protocol version, capability types, River job args and queue naming, and
// the server-side River workers.
package jobs

import (
	"fmt"
	"regexp"
	"strings"
)

// ProtocolVersion is bumped whenever job args or the rows agents write
// change incompatibly. An agent of another version is refused.
const ProtocolVersion = 1

// GPU is one accelerator as agentd detected it.
type GPU struct {
	Name        string `json:"name"`
	MemoryBytes uint64 `json:"memory_bytes"`
	UUID        string `json:"uuid,omitempty"`
}

// Hardware is what an agent's machine offers.
type Hardware struct {
	CPUModel      string `json:"cpu_model"`
	CPUCores      int    `json:"cpu_cores"`
	MemoryBytes   uint64 `json:"memory_bytes"`
	GPUs          []GPU  `json:"gpus"`
	DriverVersion string `json:"driver_version,omitempty"`
	CUDAVersion   string `json:"cuda_version,omitempty"`
}

// Capabilities is what an agent registers: its hardware and the runtimes
// it can drive.
type Capabilities struct {
	ProtocolVersion int      `json:"protocol_version"`
	Hardware        Hardware `json:"hardware"`
	Runtimes        []string `json:"runtimes"`
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// ProfileSlug names the hardware profile, such as "h100-80gb-x1" or, for
// any machine without GPUs, "cpu".
func (h Hardware) ProfileSlug() string {
	if len(h.GPUs) == 0 {
		return "cpu"
	}
	name := strings.ToLower(h.GPUs[0].Name)
	for _, vendor := range []string{"nvidia", "geforce", "tesla"} {
		name = strings.ReplaceAll(name, vendor, "")
	}
	name = strings.Trim(nonSlug.ReplaceAllString(name, "-"), "-")
	gb := (h.GPUs[0].MemoryBytes + (1<<30)/2) >> 30
	if !strings.Contains(name, fmt.Sprintf("%dgb", gb)) {
		name = fmt.Sprintf("%s-%dgb", name, gb)
	}
	return fmt.Sprintf("%s-x%d", name, len(h.GPUs))
}

// Queue is the River queue for one hardware profile and runtime, such as
// "h100-80gb-x1_vllm". Agents listen only to queues they can serve. River
// allows only lower-case letters and digits separated by single "_", "-" or
// "|" (no dots), 64 characters at most; profile slugs use "-", so "_"
// separates the runtime unambiguously.
func Queue(profile, runtime string) string { return profile + "_" + runtime }

// riverQueue is River's rule for a queue name (its client refuses any
// other at insert).
var riverQueue = regexp.MustCompile(`^[a-z0-9]+(?:[_|\-][a-z0-9]+)*$`)

// CheckQueue says why River would refuse queue name q, or nil.
func CheckQueue(q string) error {
	if len(q) > 64 {
		return fmt.Errorf("queue %q is %d characters long; River takes at most 64 (hardware profile and runtime together)", q, len(q))
	}
	if !riverQueue.MatchString(q) {
		return fmt.Errorf("queue %q is not a name River takes (lower-case letters and digits separated by single _, - or |)", q)
	}
	return nil
}
