package handlers

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/store"
)

// apiUser is a user as the JSON API shows it.
type apiUser struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
}

func toAPIUser(u store.User) apiUser {
	return apiUser{ID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role, Disabled: u.Disabled(), CreatedAt: u.CreatedAt}
}

func (s *server) apiMe(c *fiber.Ctx) error {
	return c.JSON(toAPIUser(*currentUser(c)))
}

func (s *server) apiListUsers(c *fiber.Ctx) error {
	users, err := s.Store.ListUsers(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]apiUser, len(users))
	for i, u := range users {
		out[i] = toAPIUser(u)
	}
	return c.JSON(apiUsers{Users: out})
}
