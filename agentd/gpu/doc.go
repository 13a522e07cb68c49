// Package gpu detects an agent's NVIDIA GPUs and samples them during a run
// through NVML, and turns those samples into the GPU figures of a run:
// energy, peak memory, mean utilisation and mean power.
//
// Everything works against go-nvml's nvml.Interface rather than the
// library's package-level functions, so tests can inject go-nvml's mocks
// and production passes Default().
//
// The one hard rule: on a machine without NVIDIA's library nvml.Init
// returns ERROR_LIBRARY_NOT_FOUND, and any further NVML call then kills the
// process with a symbol lookup error, which no recover() can catch. So Open
// calls Init exactly once, and an NVML whose Init failed answers every
// method from memory ("no GPU") without touching the library again.
package gpu
