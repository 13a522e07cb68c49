package admin

import (
	"context"
	"fmt"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

func orName(m store.Model) string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return m.Name
}

// memoryLabel shows the given memory need, or the estimate marked as such.
func memoryLabel(ctx context.Context, m store.Model) string {
	if m.MemoryGB != nil {
		return shortNum(ctx, *m.MemoryGB) + " GB"
	}
	return i18n.T(ctx, "admin_models.memory_estimated", "GB", shortNum(ctx, conclude.EstimateMemoryGB(m.ParamsB, m.Quantization)))
}

// paramsLabel is the parameter count in billions the way model names
// write it: 7B, 0.5B.
func paramsLabel(ctx context.Context, m store.Model) string {
	return shortNum(ctx, m.ParamsB) + "B"
}

func retireAction(m store.Model) string {
	if m.RetiredAt != nil {
		return "restore"
	}
	return "retire"
}

func retireLabel(ctx context.Context, m store.Model) string {
	if m.RetiredAt != nil {
		return i18n.T(ctx, "admin_models.restore")
	}
	return i18n.T(ctx, "admin_models.retire")
}

func formAction(f ModelForm) string {
	if f.ID == 0 {
		return "/admin/models"
	}
	return fmt.Sprintf("/admin/models/%d", f.ID)
}
