// Package node samples the machine a run is on: its CPU utilisation and
// memory, and those of the launched runtime's process tree, read from
// Linux's /proc every second beside the GPU samples
// (docs/metrics.md#gpu-energy-and-node-figures).
//
// Utilisation is a share of the whole machine, 0–100 %: the busy jiffies
// of /proc/stat's first line over all its jiffies between two readings.
// The process tree's share is the growth of its processes' user and system
// time over the same total, so it needs neither the kernel's clock tick
// nor the CPU count and is on the same scale as the machine's. A process
// of the tree that exits between readings takes its time with it (its
// parent gains it only when it reaps it), so a reading never goes below
// zero: the tree's growth is clamped at 0.
//
// Everything here parses what the kernel writes; the parsers still refuse
// what does not fit (a line too long, a number out of range) rather than
// trusting it, and are fuzzed.
package node
