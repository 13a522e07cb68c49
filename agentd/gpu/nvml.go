package gpu

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/ruckus/ruckus/jobs"
)

// Default returns NVIDIA's real library for production use. It only
// prepares the library; nothing is loaded until Open calls Init, which is
// why it is safe to call on machines without a GPU.
func Default() nvml.Interface { return nvml.New() }

// Info is what detection found, in the shape agentd registers: the GPUs
// and the driver and CUDA versions that go into jobs.Hardware.
type Info struct {
	GPUs          []jobs.GPU
	DriverVersion string
	// CUDAVersion is the highest CUDA version the driver supports, as
	// "12.4", since that is what decides which runtime builds can run.
	CUDAVersion string
	// Reason says why GPUs is empty (NVML missing, Init failed, no
	// devices), so the agent can log why it registers as CPU-only rather
	// than silently doing so.
	Reason string
}

// Fill copies the GPU part of the detection into h, leaving the CPU and
// memory fields that agentd reads elsewhere untouched. GPUs is never left
// nil so the registered JSON says "gpus": [] rather than null.
func (i Info) Fill(h *jobs.Hardware) {
	h.GPUs = append([]jobs.GPU{}, i.GPUs...)
	h.DriverVersion = i.DriverVersion
	h.CUDAVersion = i.CUDAVersion
}

// NVML is an initialised NVML session with the device handles it found.
// It exists so that the "Init failed, make no other call" rule is enforced
// in one place: every method checks ok first, and ok is only ever true
// after a successful Init.
//
// An NVML is safe for concurrent use, so a Sampler can run while another
// goroutine detects or closes.
type NVML struct {
	lib nvml.Interface

	mu      sync.RWMutex
	ok      bool // Init succeeded and Shutdown has not been called
	err     error
	devices []nvml.Device
}

// Open calls lib.Init once and lists the devices.
//
// The returned *NVML is never nil. When Init fails (for example with
// ERROR_LIBRARY_NOT_FOUND on a machine without NVIDIA's library) it is an
// NVML with no GPUs whose Err says why, the error result is nil (a
// CPU-only machine is normal), and no other NVML function is ever called.
// When Init succeeds but the devices cannot be listed, NVML is shut down,
// the *NVML again has no GPUs, and the error is returned as well: a GPU
// node that cannot see its GPUs should not quietly register as CPU-only.
func Open(lib nvml.Interface) (*NVML, error) {
	n := &NVML{lib: lib}
	if lib == nil {
		n.err = errors.New("no NVML library given")
		return n, nil
	}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		n.err = fmt.Errorf("NVML init: %w", ret)
		return n, nil
	}
	n.ok = true
	devices, err := n.listDevices()
	if err != nil {
		n.err = err
		n.shutdown()
		return n, err
	}
	n.devices = devices
	if len(devices) == 0 {
		n.err = errors.New("NVML found no GPU")
	}
	return n, nil
}

// listDevices is only called from Open right after a successful Init.
func (n *NVML) listDevices() ([]nvml.Device, error) {
	count, ret := n.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML device count: %w", ret)
	}
	devices := make([]nvml.Device, 0, count)
	for i := range count {
		d, ret := n.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML device %d handle: %w", i, ret)
		}
		devices = append(devices, d)
	}
	return devices, nil
}

// Available reports whether there are GPUs to read. When it is false no
// method makes an NVML call.
func (n *NVML) Available() bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.ok && len(n.devices) > 0
}

// Err says why no GPU is available: it wraps the nvml.Return that Init or
// device listing gave (so errors.Is(err, nvml.ERROR_LIBRARY_NOT_FOUND)
// works), or reports that the session was closed. It is nil while GPUs are
// available.
func (n *NVML) Err() error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.err
}

// Detect reads the GPUs' names, memory and UUIDs and the driver and CUDA
// versions. Without GPUs it returns an Info with only Reason set and a nil
// error, so agentd can register as CPU-only. A GPU whose name or memory
// cannot be read is an error, because registering with a wrong GPU list
// would put the agent on the wrong hardware profile; the UUID and the
// versions are informative only and left empty when unreadable.
func (n *NVML) Detect() (Info, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if !n.ok || len(n.devices) == 0 {
		return Info{GPUs: []jobs.GPU{}, Reason: reasonOf(n.err)}, nil
	}
	info := Info{GPUs: make([]jobs.GPU, 0, len(n.devices))}
	for i, d := range n.devices {
		name, ret := d.GetName()
		if ret != nvml.SUCCESS {
			return Info{}, fmt.Errorf("NVML device %d name: %w", i, ret)
		}
		mem, ret := d.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			return Info{}, fmt.Errorf("NVML device %d memory: %w", i, ret)
		}
		uuid, ret := d.GetUUID()
		if ret != nvml.SUCCESS {
			uuid = ""
		}
		info.GPUs = append(info.GPUs, jobs.GPU{Name: name, MemoryBytes: mem.Total, UUID: uuid})
	}
	if v, ret := n.lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		info.DriverVersion = v
	}
	if v, ret := n.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		info.CUDAVersion = cudaVersion(v)
	}
	return info, nil
}

// Close shuts NVML down if Init succeeded; afterwards the NVML behaves as
// one without GPUs. Calling it again, or on an NVML whose Init failed,
// makes no NVML call and returns nil.
func (n *NVML) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.ok {
		return nil
	}
	ret := n.shutdown()
	if n.err == nil {
		n.err = errors.New("NVML closed")
	}
	if ret != nvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %w", ret)
	}
	return nil
}

// shutdown must only be called with ok true; it clears ok first so that
// whatever happens no further call reaches the library.
func (n *NVML) shutdown() nvml.Return {
	n.ok = false
	n.devices = nil
	return n.lib.Shutdown()
}

// Detect is the one-shot form for agent start-up: Open, Detect, Close. Its
// error is as Open's and Detect's; the Info is usable (possibly with no
// GPUs and a Reason) even when the error is not nil.
func Detect(lib nvml.Interface) (Info, error) {
	n, err := Open(lib)
	if err != nil {
		return Info{GPUs: []jobs.GPU{}, Reason: reasonOf(err)}, err
	}
	defer n.Close()
	return n.Detect()
}

func reasonOf(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// cudaVersion turns NVML's integer CUDA version (1000×major + 10×minor,
// e.g. 12040) into the "12.4" people and runtime requirements use.
func cudaVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return strconv.Itoa(v/1000) + "." + strconv.Itoa(v%1000/10)
}
