package gpu

import (
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/ruckus/ruckus/jobs"
)

// initFailing is an NVML whose Init returns ret and whose every other
// function reports a test failure: with the real library such a call
// would kill the process. Every XxxFunc field of the mock is set through
// reflection so that no function the package might call in future is
// missed. It reports with t.Errorf (safe from any goroutine) and answers
// ERROR_UNINITIALIZED, and counts the calls so tests can assert on zero.
func initFailing(t *testing.T, ret nvml.Return) (*mock.Interface, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	m := &mock.Interface{}
	v := reflect.ValueOf(m).Elem()
	typ := v.Type()
	returnType := reflect.TypeFor[nvml.Return]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Func || !strings.HasSuffix(f.Name, "Func") {
			continue
		}
		name := strings.TrimSuffix(f.Name, "Func")
		if name == "Init" {
			continue
		}
		fnType := f.Type
		v.Field(i).Set(reflect.MakeFunc(fnType, func([]reflect.Value) []reflect.Value {
			calls.Add(1)
			t.Errorf("NVML %s called after Init failed", name)
			out := make([]reflect.Value, fnType.NumOut())
			for j := range out {
				out[j] = reflect.Zero(fnType.Out(j))
				if fnType.Out(j) == returnType {
					out[j] = reflect.ValueOf(nvml.ERROR_UNINITIALIZED)
				}
			}
			return out
		}))
	}
	m.InitFunc = func() nvml.Return { return ret }
	return m, &calls
}

func TestInitFailsMakesNoOtherCall(t *testing.T) {
	for _, ret := range []nvml.Return{nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_NO_PERMISSION} {
		t.Run(ret.Error(), func(t *testing.T) {
			lib, calls := initFailing(t, ret)
			n, err := Open(lib)
			if err != nil {
				t.Fatalf("Open: %v, want nil (no GPU is not an error)", err)
			}
			if n.Available() {
				t.Error("Available() = true after failed Init")
			}
			if !errors.Is(n.Err(), ret) {
				t.Errorf("Err() = %v, want it to wrap %v", n.Err(), ret)
			}
			info, err := n.Detect()
			if err != nil || len(info.GPUs) != 0 || info.GPUs == nil || !strings.Contains(info.Reason, ret.Error()) {
				t.Errorf("Detect() = %+v, %v; want no GPUs and a reason naming %v", info, err, ret)
			}
			if s := n.Sample(); len(s.GPUs) != 0 || s.At.IsZero() {
				t.Errorf("Sample() = %+v, want a timestamped sample without GPUs", s)
			}
			called := false
			Sampler{Source: n, Interval: 1}.Run(t.Context(), func(Sample) { called = true })
			if called {
				t.Error("Sampler.Run called fn without GPUs")
			}
			if err := n.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if info, err := Detect(lib); err != nil || len(info.GPUs) != 0 || info.Reason == "" {
				t.Errorf("Detect(lib) = %+v, %v; want no GPUs with a reason", info, err)
			}
			if got := len(lib.InitCalls()); got != 2 { // one per Open
				t.Errorf("Init called %d times, want 2", got)
			}
			if c := calls.Load(); c != 0 {
				t.Errorf("%d NVML calls after failed Init, want 0", c)
			}
		})
	}
}

// TestDefaultLibraryWithoutGPU runs the real go-nvml library: on a machine
// without NVIDIA's library Init must report ERROR_LIBRARY_NOT_FOUND and
// everything after it must answer "no GPU" without crashing (a stray NVML
// call would end this process with a symbol lookup error).
func TestDefaultLibraryWithoutGPU(t *testing.T) {
	n, err := Open(Default())
	if err != nil {
		t.Fatalf("Open(Default()): %v", err)
	}
	defer n.Close()
	if n.Available() {
		t.Skip("a real NVIDIA library and GPU are present")
	}
	info, err := n.Detect()
	if err != nil || len(info.GPUs) != 0 || info.Reason == "" {
		t.Errorf("Detect() = %+v, %v; want no GPUs with a reason", info, err)
	}
	if s := n.Sample(); len(s.GPUs) != 0 {
		t.Errorf("Sample() has %d GPUs, want 0", len(s.GPUs))
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if info, err := Detect(Default()); err != nil || len(info.GPUs) != 0 {
		t.Errorf("Detect(Default()) = %+v, %v; want no GPUs", info, err)
	}
	if !errors.Is(n.Err(), nvml.ERROR_LIBRARY_NOT_FOUND) {
		// The library loaded but Init failed (e.g. no driver): a real
		// NVIDIA library is present, so the exact code is not ours to test.
		t.Skipf("NVIDIA library present but Init failed: %v", n.Err())
	}
}

func TestDetectDGXA100(t *testing.T) {
	server := dgxa100.New()
	n, err := Open(server)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if !n.Available() || n.Err() != nil {
		t.Fatalf("Available() = %v, Err() = %v; want GPUs", n.Available(), n.Err())
	}
	info, err := n.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if len(info.GPUs) != 8 {
		t.Fatalf("got %d GPUs, want 8", len(info.GPUs))
	}
	for i, g := range info.GPUs {
		want := jobs.GPU{
			Name:        "Mock NVIDIA A100-SXM4-40GB",
			MemoryBytes: 40 << 30,
			UUID:        server.Devices[i].(*dgxa100.Device).UUID,
		}
		if g != want {
			t.Errorf("GPU %d = %+v, want %+v", i, g, want)
		}
		if !strings.HasPrefix(g.UUID, "GPU-") {
			t.Errorf("GPU %d UUID = %q, want NVML's GPU-… form", i, g.UUID)
		}
	}
	if info.DriverVersion != "550.54.15" || info.CUDAVersion != "12.4" || info.Reason != "" {
		t.Errorf("driver %q, CUDA %q, reason %q; want 550.54.15, 12.4, none",
			info.DriverVersion, info.CUDAVersion, info.Reason)
	}

	h := jobs.Hardware{CPUModel: "kept", CPUCores: 64}
	info.Fill(&h)
	if h.CPUModel != "kept" || h.CPUCores != 64 || len(h.GPUs) != 8 || h.CUDAVersion != "12.4" {
		t.Errorf("Fill gave %+v", h)
	}
	if got, want := h.ProfileSlug(), "mock-a100-sxm4-40gb-x8"; got != want {
		t.Errorf("profile %q, want %q", got, want)
	}

	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if n.Available() || n.Err() == nil {
		t.Error("still available after Close")
	}
	if s := n.Sample(); len(s.GPUs) != 0 {
		t.Error("Sample after Close read GPUs")
	}
	if got := len(server.ShutdownCalls()); got != 1 {
		t.Errorf("Shutdown called %d times, want 1 (Close is idempotent)", got)
	}
}

func TestDetectOneShotShutsDown(t *testing.T) {
	server := dgxa100.New()
	info, err := Detect(server)
	if err != nil || len(info.GPUs) != 8 {
		t.Fatalf("Detect = %d GPUs, %v", len(info.GPUs), err)
	}
	if i, s := len(server.InitCalls()), len(server.ShutdownCalls()); i != 1 || s != 1 {
		t.Errorf("Init %d, Shutdown %d times; want 1 each", i, s)
	}
}

func TestDetectErrors(t *testing.T) {
	t.Run("device count fails", func(t *testing.T) {
		server := dgxa100.New()
		server.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		n, err := Open(server)
		if !errors.Is(err, nvml.ERROR_UNKNOWN) {
			t.Fatalf("Open error %v, want ERROR_UNKNOWN", err)
		}
		if n == nil || n.Available() || !errors.Is(n.Err(), nvml.ERROR_UNKNOWN) {
			t.Fatalf("want an unavailable NVML explaining why, got %+v", n)
		}
		if got := len(server.ShutdownCalls()); got != 1 {
			t.Errorf("Shutdown called %d times, want 1", got)
		}
		if _, err := Detect(server); err == nil {
			t.Error("Detect(lib) gave no error")
		}
	})
	t.Run("no devices", func(t *testing.T) {
		server := dgxa100.New()
		server.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
		n, err := Open(server)
		if err != nil || n.Available() || n.Err() == nil {
			t.Fatalf("Open = %v, Available %v, Err %v; want no GPU with a reason", err, n.Available(), n.Err())
		}
		info, err := n.Detect()
		if err != nil || len(info.GPUs) != 0 || info.Reason == "" {
			t.Errorf("Detect() = %+v, %v", info, err)
		}
		n.Close()
		if got := len(server.ShutdownCalls()); got != 1 {
			t.Errorf("Shutdown called %d times, want 1", got)
		}
	})
	t.Run("name fails", func(t *testing.T) {
		server := dgxa100.New()
		server.Devices[3].(*dgxa100.Device).GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		_, err := Detect(server)
		if !errors.Is(err, nvml.ERROR_GPU_IS_LOST) || !strings.Contains(err.Error(), "device 3") {
			t.Errorf("Detect error %v, want device 3's ERROR_GPU_IS_LOST", err)
		}
	})
	t.Run("versions and UUID unreadable", func(t *testing.T) {
		server := dgxa100.New()
		server.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		server.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		server.Devices[0].(*dgxa100.Device).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_NOT_SUPPORTED }
		info, err := Detect(server)
		if err != nil {
			t.Fatal(err)
		}
		if info.DriverVersion != "" || info.CUDAVersion != "" || info.GPUs[0].UUID != "" || info.GPUs[1].UUID == "" {
			t.Errorf("got %+v; want versions and GPU 0's UUID empty, the rest intact", info)
		}
	})
}

func TestOpenNilLibrary(t *testing.T) {
	n, err := Open(nil)
	if err != nil || n.Available() || n.Err() == nil {
		t.Errorf("Open(nil) = %v, Available %v, Err %v", err, n.Available(), n.Err())
	}
}

func TestCUDAVersion(t *testing.T) {
	for _, tc := range []struct {
		in   int
		want string
	}{
		{12040, "12.4"},
		{12000, "12.0"},
		{11080, "11.8"},
		{12090, "12.9"},
		{13000, "13.0"},
		{10010, "10.1"},
		{0, ""},
		{-1, ""},
	} {
		if got := cudaVersion(tc.in); got != tc.want {
			t.Errorf("cudaVersion(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
