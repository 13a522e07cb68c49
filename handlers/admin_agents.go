package handlers

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/admin"
)

// adminAgentStore is what the admin pages of agents and hardware write.
type adminAgentStore interface {
	SetAgentDrained(ctx context.Context, id int64, drained bool) error
	SetAgentDeactivated(ctx context.Context, id int64, deactivated bool) error
	ApproveAgent(ctx context.Context, id int64) error
	ListHardwareProfiles(ctx context.Context, staleAfter time.Duration) ([]store.HardwareProfile, error)
	SetHardwarePrice(ctx context.Context, slug string, price *float64) error
}

func (s *server) showAgentsPage(c *fiber.Ctx) error {
	rows, err := s.agentRows(c.UserContext())
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, admin.AgentsPage(rows))
}

// agentAction applies drain/undrain/deactivate/reactivate/approve to :id.
func (s *server) agentAction(set func(ctx context.Context, id int64) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := idParam(c, "id", "agent")
		if err != nil {
			return err
		}
		if err := set(c.UserContext(), id); err != nil {
			return lookup("agent", err)
		}
		s.Logger.Info("agent changed", "by", currentUser(c).ID, "agent_id", id, "action", c.Path())
		return redirect(c, "/admin/agents")
	}
}

func (s *server) showHardwarePage(c *fiber.Ctx) error {
	return s.hardwareResult(c, fiber.StatusOK, nil)
}

func (s *server) hardwareResult(c *fiber.Ctx, status int, errs map[string]string) error {
	hs, err := s.Store.ListHardwareProfiles(c.UserContext(), s.AgentStaleAfter)
	if err != nil {
		return err
	}
	return render(c, status, admin.HardwarePage(hs, errs))
}

// priceRequest is a hardware profile's price form; no price is no price.
type priceRequest struct {
	Price *float64 `form:"price" validate:"omitnil,finite,min=0,max=1000000" msg:"valid.agent_price"`
}

func (s *server) setHardwarePrice(c *fiber.Ctx) error {
	slug, err := slugParam(c, "slug")
	if err != nil {
		return err
	}
	var req priceRequest
	if raw := strings.TrimSpace(c.FormValue("price")); raw != "" {
		// A price that does not parse is NaN, which its rules refuse.
		p, err := parseFinite("price", strings.TrimPrefix(raw, "$"))
		if err != nil {
			p = math.NaN()
		}
		req.Price = &p
	}
	if errs := s.validate.Struct(req); errs != nil {
		return s.hardwareResult(c, fiber.StatusUnprocessableEntity, map[string]string{slug: errs[0].Text(c.UserContext())})
	}
	if err := s.Store.SetHardwarePrice(c.UserContext(), slug, req.Price); err != nil {
		return lookup("hardware profile", err)
	}
	if err := s.flashKey(c, "info", "admin_agents.hardware.price_saved", "Slug", slug); err != nil {
		return err
	}
	return redirect(c, "/admin/hardware")
}
