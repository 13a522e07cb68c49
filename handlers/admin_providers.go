package handlers

import (
	"context"
	"math"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/admin"
)

type providerPriceStore interface {
	ListProviderPrices(ctx context.Context) ([]store.ProviderPrice, error)
	SetProviderPrice(ctx context.Context, p store.ProviderPrice) error
	DeleteProviderPrice(ctx context.Context, provider, model string) error
}

// providers is the provider table fleets are checked against.
func (s *server) providers() jobs.Providers {
	if s.Providers != nil {
		return s.Providers
	}
	return jobs.DefaultProviders()
}

func (s *server) showProvidersPage(c *fiber.Ctx) error {
	return s.providersResult(c, fiber.StatusOK, admin.ProviderPriceForm{}, nil)
}

func (s *server) providersResult(c *fiber.Ctx, status int, form admin.ProviderPriceForm, errs map[string]string) error {
	prices, err := s.Store.ListProviderPrices(c.UserContext())
	if err != nil {
		return err
	}
	table := s.providers()
	rows := make([]jobs.Provider, 0, len(table))
	for _, name := range table.Names() {
		rows = append(rows, table[name])
	}
	return render(c, status, admin.ProvidersPage(rows, prices, form, errs))
}

// providerPriceRequest is a provider's price for a model, in USD per 1M
// input and output tokens.
type providerPriceRequest struct {
	Model  string  `form:"model" validate:"model_name" msg:"valid.provider_model"`
	Input  float64 `form:"input_per_1m" validate:"finite,min=0,max=1000000" msg:"valid.price_input"`
	Output float64 `form:"output_per_1m" validate:"finite,min=0,max=1000000" msg:"valid.price_output"`
}

func (s *server) setProviderPrice(c *fiber.Ctx) error {
	form := admin.ProviderPriceForm{Provider: strings.Clone(c.FormValue("provider")), Model: strings.TrimSpace(c.FormValue("model")),
		Input: strings.Clone(c.FormValue("input_per_1m")), Output: strings.Clone(c.FormValue("output_per_1m"))}
	errs := map[string]string{}
	if _, ok := s.providers()[form.Provider]; !ok {
		errs["provider"] = i18n.T(c.UserContext(), "admin_providers.choose_provider")
	}
	// A price that does not parse is NaN, which its rules refuse.
	number := func(raw string) float64 {
		v, err := parseFinite("price", strings.TrimPrefix(strings.TrimSpace(raw), "$"))
		if err != nil {
			return math.NaN()
		}
		return v
	}
	req := providerPriceRequest{Model: form.Model, Input: number(form.Input), Output: number(form.Output)}
	for _, e := range s.validate.Struct(req) {
		errs[e.Path] = e.Text(c.UserContext())
	}
	if len(errs) > 0 {
		return s.providersResult(c, fiber.StatusUnprocessableEntity, form, errs)
	}
	if err := s.Store.SetProviderPrice(c.UserContext(), store.ProviderPrice{Provider: form.Provider, Model: req.Model,
		InputPer1M: req.Input, OutputPer1M: req.Output}); err != nil {
		return err
	}
	s.Logger.Info("provider price set", "by", currentUser(c).ID, "provider", form.Provider, "model", req.Model)
	if err := s.flashKey(c, "info", "admin_providers.saved", "Provider", form.Provider, "Model", req.Model); err != nil {
		return err
	}
	return redirect(c, "/admin/providers")
}

func (s *server) deleteProviderPrice(c *fiber.Ctx) error {
	provider, model := strings.Clone(c.FormValue("provider")), strings.Clone(c.FormValue("model"))
	if provider == "" || model == "" || len(provider) > 63 || len(model) > 200 {
		return catalogueErr(fiber.StatusBadRequest, "admin_providers.name_the_price")
	}
	if err := s.Store.DeleteProviderPrice(c.UserContext(), provider, model); err != nil {
		return lookup("price", err)
	}
	if err := s.flashKey(c, "info", "admin_providers.removed", "Provider", provider, "Model", model); err != nil {
		return err
	}
	return redirect(c, "/admin/providers")
}
