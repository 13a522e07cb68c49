package admin

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

func joined(s []string) string { return strings.Join(s, ", ") }

func drainAction(a store.Agent) string {
	if a.Drained {
		return "undrain"
	}
	return "drain"
}

func drainLabel(ctx context.Context, a store.Agent) string {
	if a.Drained {
		return i18n.T(ctx, "admin_agents.undrain")
	}
	return i18n.T(ctx, "admin_agents.drain")
}

func deactivateAction(a store.Agent) string {
	if a.DeactivatedAt != nil {
		return "reactivate"
	}
	return "deactivate"
}

func deactivateLabel(ctx context.Context, a store.Agent) string {
	if a.DeactivatedAt != nil {
		return i18n.T(ctx, "admin_agents.reactivate")
	}
	return i18n.T(ctx, "admin_agents.deactivate")
}

// heartbeatTime is t to the second in the language's form: a heartbeat
// comes every few seconds, so the minute alone would hide a stall.
func heartbeatTime(ctx context.Context, t time.Time) string {
	return i18n.DateTime(ctx, t) + t.UTC().Format(":05")
}

func gpuLabel(ctx context.Context, h store.HardwareProfile) string {
	if h.GPUCount == 0 {
		return i18n.T(ctx, "admin_agents.hardware.no_gpu")
	}
	return i18n.Int(ctx, int64(h.GPUCount)) + " × " + h.GPUName
}

func gpuMemory(ctx context.Context, h store.HardwareProfile) string {
	if h.GPUCount == 0 {
		return "—"
	}
	return i18n.Int(ctx, int64(h.GPUCount)) + " × " + i18n.Num(ctx, float64(h.GPUMemoryBytes)/1e9, 0) + " GB"
}

// agentCounts is a profile's agents and, in brackets, those online.
func agentCounts(ctx context.Context, h store.HardwareProfile) string {
	return i18n.Int(ctx, int64(h.Agents)) + " (" + i18n.Int(ctx, int64(h.OnlineAgents)) + ")"
}

// priceValue is the price as the form field takes it back: Go's number
// syntax, whatever the language, since the handler parses it so.
func priceValue(h store.HardwareProfile) string {
	if h.PricePerHour == nil {
		return ""
	}
	return strconv.FormatFloat(*h.PricePerHour, 'f', -1, 64)
}

// shortNum is v with as many decimals as it needs, at most 6, in the
// language's form: 16.8, 0.5, 7 (16,8 in German).
func shortNum(ctx context.Context, v float64) string {
	_, frac, _ := strings.Cut(strings.TrimRight(strconv.FormatFloat(v, 'f', 6, 64), "0"), ".")
	return i18n.Num(ctx, v, len(frac))
}
