package admin

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/store"
)

func joined(s []string) string { return strings.Join(s, ", ") }

func drainAction(a store.Agent) string {
	if a.Drained {
		return "undrain"
	}
	return "drain"
}

func drainLabel(a store.Agent) string {
	if a.Drained {
		return "Undrain"
	}
	return "Drain"
}

func deactivateAction(a store.Agent) string {
	if a.DeactivatedAt != nil {
		return "reactivate"
	}
	return "deactivate"
}

func deactivateLabel(a store.Agent) string {
	if a.DeactivatedAt != nil {
		return "Reactivate"
	}
	return "Deactivate"
}

func gpuLabel(h store.HardwareProfile) string {
	if h.GPUCount == 0 {
		return "none (CPU only)"
	}
	return fmt.Sprintf("%d × %s", h.GPUCount, h.GPUName)
}

func gpuMemory(h store.HardwareProfile) string {
	if h.GPUCount == 0 {
		return "—"
	}
	return fmt.Sprintf("%d × %.0f GB", h.GPUCount, float64(h.GPUMemoryBytes)/1e9)
}

func priceValue(h store.HardwareProfile) string {
	if h.PricePerHour == nil {
		return ""
	}
	return strconv.FormatFloat(*h.PricePerHour, 'f', -1, 64)
}
