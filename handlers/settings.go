package handlers

import (
	"context"
	"strings"

	"github.com/ruckus/ruckus/app/i18n"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/account"
)

type tokenStore interface {
	CreateAPIToken(ctx context.Context, userID int64, name, prefix string, hash []byte) (store.APIToken, error)
	ListAPITokens(ctx context.Context, userID int64) ([]store.APIToken, error)
	RevokeAPIToken(ctx context.Context, userID, id int64) error
	UserByAPIToken(ctx context.Context, hash []byte) (store.User, error)
	SetUserLanguage(ctx context.Context, id int64, lang string) error
}

func (s *server) showSettingsPage(c *fiber.Ctx) error {
	return s.renderSettings(c, fiber.StatusOK, account.SettingsData{})
}

// renderSettings renders the whole Settings page with d's forms as given
// and the viewer's tokens, webhooks and deliveries.
func (s *server) renderSettings(c *fiber.Ctx, status int, d account.SettingsData) error {
	u := currentUser(c)
	tokens, err := s.Store.ListAPITokens(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	d.Email = u.Email
	d.Language = u.Language
	d.Tokens.Tokens, d.Tokens.Limits = tokens, s.apiLimits()
	if d.Webhooks, err = s.webhooksData(c, d.Webhooks); err != nil {
		return err
	}
	return render(c, status, account.SettingsPage(d))
}

// setLanguage stores the interface language the user chose ("" follows
// the browser) and shows the settings page in it.
func (s *server) setLanguage(c *fiber.Ctx) error {
	u := currentUser(c)
	lang := c.FormValue("language")
	if !i18n.Valid(lang) {
		return fiber.NewError(fiber.StatusUnprocessableEntity, i18n.T(c.UserContext(), "settings.language_unknown"))
	}
	if err := s.Store.SetUserLanguage(c.UserContext(), u.ID, lang); err != nil {
		return err
	}
	u.Language = lang
	if err := s.flash(c, "info", i18n.Default().For(lang, c.Get(fiber.HeaderAcceptLanguage)).T("settings.language_saved")); err != nil {
		return err
	}
	return redirect(c, "/settings")
}

// passwordRequest is the change-password form.
type passwordRequest struct {
	Current string `form:"current"`
	// The password policy (auth.CheckPolicy) counts bytes, as bcrypt does.
	New     string `form:"new" validate:"minbytes=8,maxbytes=72" msg:"valid.new_password_length"`
	Confirm string `form:"confirm" validate:"eqfield=New" msg:"valid.new_passwords_differ"`
}

// changePassword checks the current password and stores the new one; every
// other session of the user is signed out, this one stays.
func (s *server) changePassword(c *fiber.Ctx) error {
	u := currentUser(c)
	req := passwordRequest{Current: c.FormValue("current"), New: c.FormValue("new"), Confirm: c.FormValue("confirm")}
	form := account.PasswordForm{Errors: s.validate.Struct(req).MapText(c.UserContext())}
	if !s.Passwords.Match(u.PasswordHash, req.Current) {
		form.Errors["current"] = i18n.T(c.UserContext(), "request.wrong_password")
	}
	if len(form.Errors) > 0 {
		return s.passwordResult(c, fiber.StatusUnprocessableEntity, form)
	}
	next := req.New
	hash, err := s.Passwords.Hash(next)
	if err != nil {
		return err
	}
	if err := s.Store.SetUserPassword(c.UserContext(), u.ID, hash, auth.TokenHash(currentSession(c))); err != nil {
		return err
	}
	form.Done = true
	return s.passwordResult(c, fiber.StatusOK, form)
}

// passwordResult answers htmx with the section alone and plain form posts
// with the whole page.
func (s *server) passwordResult(c *fiber.Ctx, status int, form account.PasswordForm) error {
	if c.Get("HX-Request") != "" {
		return render(c, status, account.PasswordSection(form))
	}
	return s.renderSettings(c, status, account.SettingsData{Password: form})
}

// tokenRequest is the new-token form.
type tokenRequest struct {
	Name string `form:"name" validate:"notblank,max=100,text" msg_notblank:"valid.token_name" msg_max:"valid.token_name_long" msg_text:"valid.token_name_text"`
}

func (s *server) createToken(c *fiber.Ctx) error {
	u := currentUser(c)
	req := tokenRequest{Name: strings.TrimSpace(c.FormValue("name"))}
	d := account.TokensData{}
	status := fiber.StatusOK
	if errs := s.validate.Struct(req); errs != nil {
		d.Error = errs[0].Text(c.UserContext())
		status = fiber.StatusUnprocessableEntity
	} else {
		token, prefix, hash := auth.NewAPIToken()
		if _, err := s.Store.CreateAPIToken(c.UserContext(), u.ID, req.Name, prefix, hash); err != nil {
			return err
		}
		d.NewToken, d.NewName = token, req.Name
	}
	return s.tokensResult(c, status, d)
}

func (s *server) revokeToken(c *fiber.Ctx) error {
	u := currentUser(c)
	id, err := idParam(c, "id", "token")
	if err != nil {
		return err
	}
	if err := s.Store.RevokeAPIToken(c.UserContext(), u.ID, id); err != nil {
		return lookup("active token", err)
	}
	return s.tokensResult(c, fiber.StatusOK, account.TokensData{})
}

func (s *server) tokensResult(c *fiber.Ctx, status int, d account.TokensData) error {
	u := currentUser(c)
	tokens, err := s.Store.ListAPITokens(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	d.Tokens, d.Limits = tokens, s.apiLimits()
	if c.Get("HX-Request") != "" {
		return render(c, status, account.TokensSection(d))
	}
	return s.renderSettings(c, status, account.SettingsData{Tokens: d})
}
