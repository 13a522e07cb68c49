package admin

import (
	"fmt"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/store"
)

func orName(m store.Model) string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return m.Name
}

// memoryLabel shows the given memory need, or the estimate marked as such.
func memoryLabel(m store.Model) string {
	if m.MemoryGB != nil {
		return fmt.Sprintf("%g GB", *m.MemoryGB)
	}
	return fmt.Sprintf("≈ %g GB (estimated)", advise.EstimateMemoryGB(m.ParamsB, m.Quantization))
}

func retireAction(m store.Model) string {
	if m.RetiredAt != nil {
		return "restore"
	}
	return "retire"
}

func retireLabel(m store.Model) string {
	if m.RetiredAt != nil {
		return "Restore"
	}
	return "Retire"
}

func formAction(f ModelForm) string {
	if f.ID == 0 {
		return "/admin/models"
	}
	return fmt.Sprintf("/admin/models/%d", f.ID)
}
