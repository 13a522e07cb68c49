package benchmarks

import (
	"fmt"

	"github.com/ruckus/ruckus/app/bench"
)

func orManifest(path string) string {
	if path == "" {
		return "manifest"
	}
	return path
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func memory(r bench.PlannedRun) string {
	if r.CapacityGB == 0 {
		return fmt.Sprintf("~%.1f GB (CPU)", r.MemoryGB)
	}
	return fmt.Sprintf("~%.1f of %.0f GB", r.MemoryGB, r.CapacityGB)
}
