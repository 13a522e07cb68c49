package handlers

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/home"
)

type agentStore interface {
	ListAgents(ctx context.Context) ([]store.Agent, error)
}

func (s *server) agentRows(ctx context.Context) ([]home.AgentRow, error) {
	agents, err := s.Store.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rows := make([]home.AgentRow, len(agents))
	for i, a := range agents {
		rows[i] = home.AgentRow{Agent: a, Status: a.Status(now, s.AgentStaleAfter, jobs.ProtocolVersion), Ago: now.Sub(a.LastHeartbeatAt)}
	}
	return rows, nil
}

func (s *server) showHomePage(c *fiber.Ctx) error {
	rows, err := s.agentRows(c.UserContext())
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, home.Page(home.Data{Name: currentUser(c).Name, Agents: rows}))
}

func (s *server) agentsFragment(c *fiber.Ctx) error {
	rows, err := s.agentRows(c.UserContext())
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, home.Agents(rows))
}
