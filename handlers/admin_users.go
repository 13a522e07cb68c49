package handlers

import (
	"context"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/admin"
)

type userStore interface {
	UserByID(ctx context.Context, id int64) (store.User, error)
	UserByEmail(ctx context.Context, email string) (store.User, error)
	ListUsers(ctx context.Context) ([]store.User, error)
	CreateUser(ctx context.Context, nu store.NewUser) (store.User, error)
	SetUserDisabled(ctx context.Context, id int64, disabled bool) error
	SetUserPassword(ctx context.Context, id int64, hash string, keepSession []byte) error
	ResetUserPassword(ctx context.Context, id int64, hash string) (revokedTokens int, err error)
}

// newUserRequest is the create-user form; each field's tags are its rules
// and msg its message beside the field.
type newUserRequest struct {
	Email string `form:"email" validate:"required,email,max=254,text" msg:"valid.user_email"`
	Name  string `form:"name" validate:"max=200,text" msg:"valid.user_name"`
	// bcrypt counts bytes, max characters: maxbytes checks the bytes too.
	Password string `form:"password" validate:"min=8,max=72,maxbytes=72" msg:"valid.user_password"`
	Admin    bool   `form:"admin"`
}

func (s *server) showUsersPage(c *fiber.Ctx) error {
	return s.usersResult(c, fiber.StatusOK, admin.UsersData{})
}

func (s *server) usersResult(c *fiber.Ctx, status int, d admin.UsersData) error {
	users, err := s.Store.ListUsers(c.UserContext())
	if err != nil {
		return err
	}
	d.Users = users
	d.SelfID = currentUser(c).ID
	if c.Get("HX-Request") != "" {
		return render(c, status, admin.UsersSection(d))
	}
	return render(c, status, admin.UsersPage(d))
}

func (s *server) createUser(c *fiber.Ctx) error {
	var req newUserRequest
	if err := c.BodyParser(&req); err != nil {
		return catalogueErr(fiber.StatusBadRequest, "admin_users.form_unreadable")
	}
	req.Email = strings.ToLower(strings.TrimSpace(req.Email))
	req.Name = strings.TrimSpace(req.Name)
	form := admin.NewUserForm{Email: req.Email, Name: req.Name, Admin: req.Admin, Errors: s.validate.Struct(req).MapText(c.UserContext())}
	if len(form.Errors) > 0 {
		return s.usersResult(c, fiber.StatusUnprocessableEntity, admin.UsersData{Form: form})
	}
	hash, err := s.Passwords.Hash(req.Password)
	if err != nil {
		return err
	}
	role := store.RoleUser
	if req.Admin {
		role = store.RoleAdmin
	}
	_, err = s.Store.CreateUser(c.UserContext(), store.NewUser{Email: req.Email, Name: req.Name, PasswordHash: hash, Role: role})
	if errors.Is(err, store.ErrEmailTaken) {
		form.Errors["email"] = i18n.T(c.UserContext(), "admin_users.email_taken")
		return s.usersResult(c, fiber.StatusUnprocessableEntity, admin.UsersData{Form: form})
	}
	if err != nil {
		return err
	}
	s.Logger.Info("user created", "by", currentUser(c).ID, "email", req.Email, "role", role)
	return s.usersResult(c, fiber.StatusOK, admin.UsersData{Created: req.Email})
}

// targetUser reads :id and refuses actions on the admin's own account, so
// an admin cannot lock themselves out.
func (s *server) targetUser(c *fiber.Ctx) (store.User, error) {
	id, err := idParam(c, "id", "user")
	if err != nil {
		return store.User{}, err
	}
	if id == currentUser(c).ID {
		return store.User{}, catalogueErr(fiber.StatusUnprocessableEntity, "admin_users.not_yourself")
	}
	u, err := s.Store.UserByID(c.UserContext(), id)
	return u, lookup("user", err)
}

func (s *server) setUserDisabled(disabled bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		u, err := s.targetUser(c)
		if err != nil {
			return err
		}
		if err := s.Store.SetUserDisabled(c.UserContext(), u.ID, disabled); err != nil {
			return err
		}
		s.Logger.Info("user disabled changed", "by", currentUser(c).ID, "user_id", u.ID, "disabled", disabled)
		return s.usersResult(c, fiber.StatusOK, admin.UsersData{})
	}
}

func (s *server) resetPassword(c *fiber.Ctx) error {
	u, err := s.targetUser(c)
	if err != nil {
		return err
	}
	pw := auth.GeneratePassword()
	hash, err := s.Passwords.Hash(pw)
	if err != nil {
		return err
	}
	// A reset means the old password may be known to someone else, who
	// may also have made tokens with it: those go too.
	revoked, err := s.Store.ResetUserPassword(c.UserContext(), u.ID, hash)
	if err != nil {
		return err
	}
	s.Logger.Info("password reset", "by", currentUser(c).ID, "user_id", u.ID, "tokens_revoked", revoked)
	return s.usersResult(c, fiber.StatusOK, admin.UsersData{ResetEmail: u.Email, ResetPassword: pw, ResetTokensRevoked: revoked})
}
