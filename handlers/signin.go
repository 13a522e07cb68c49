package handlers

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/account"
)

type sessionStore interface {
	auth.SessionRows
}

// badCredentials is the one message for every failed sign-in, so the page
// does not tell which emails have accounts.
const badCredentials = "form_err.bad_credentials"

func (s *server) showSignInPage(c *fiber.Ctx) error {
	next := safeNext(c.Query("next"))
	if currentUser(c) != nil {
		return c.Redirect(next, fiber.StatusSeeOther)
	}
	return render(c, fiber.StatusOK, account.SignInPage(account.SignInForm{Next: next}))
}

func (s *server) signIn(c *fiber.Ctx) error {
	email := strings.ToLower(strings.TrimSpace(c.FormValue("email")))
	password := c.FormValue("password")
	form := account.SignInForm{Email: email, Next: safeNext(c.FormValue("next"))}

	u, err := s.Store.UserByEmail(c.UserContext(), email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if !s.Passwords.Match(u.PasswordHash, password) || u.Disabled() {
		form.Error = i18n.T(c.UserContext(), badCredentials)
		return render(c, fiber.StatusUnauthorized, account.SignInPage(form))
	}

	// A fresh session and a fresh CSRF token: nothing chosen before sign-in
	// (by the visitor or anyone who planted a cookie) survives it.
	if old := currentSession(c); old != nil && !old.IsNew {
		if err := s.Store.DeleteSession(c.UserContext(), auth.TokenHash(old)); err != nil {
			return err
		}
	}
	sess := sessions.NewSession(s.sessions, sessionCookie)
	opts := *s.sessions.Options
	sess.Options = &opts
	sess.Values[auth.UserIDKey] = u.ID
	if err := saveSession(c, sess); err != nil {
		return err
	}
	s.newCSRFToken(c)
	s.Logger.Info("signed in", "user_id", u.ID)
	return redirect(c, form.Next)
}

func (s *server) signInLimitReached(c *fiber.Ctx) error {
	form := account.SignInForm{
		Email: strings.ToLower(strings.TrimSpace(c.FormValue("email"))),
		Next:  safeNext(c.FormValue("next")),
		Error: i18n.T(c.UserContext(), "form_err.signin_limit"),
	}
	c.Set(fiber.HeaderRetryAfter, "60")
	return render(c, fiber.StatusTooManyRequests, account.SignInPage(form))
}

func (s *server) signOut(c *fiber.Ctx) error {
	if sess := currentSession(c); sess != nil && !sess.IsNew {
		sess.Options.MaxAge = -1
		if err := saveSession(c, sess); err != nil {
			return err
		}
	}
	if err := s.flashKey(c, "info", "request.signed_out"); err != nil {
		return err
	}
	return redirect(c, "/signin")
}
