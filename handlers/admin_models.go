package handlers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/admin"
)

type modelStore interface {
	CreateModel(ctx context.Context, f store.ModelFields) (int64, error)
	UpdateModel(ctx context.Context, id int64, f store.ModelFields) error
	SetModelRetired(ctx context.Context, id int64, retired bool) error
	ModelByID(ctx context.Context, id int64) (store.Model, error)
	ListModels(ctx context.Context) ([]store.Model, error)
}

// parseModelForm reads and checks the model form; errors are keyed by field.
func parseModelForm(c *fiber.Ctx, id int64) (admin.ModelForm, store.ModelFields) {
	return checkModel(func(k string) string { return c.FormValue(k) }, id)
}

// checkModel reads the model's fields by name from get (a form or a JSON
// body) and checks them; errors are keyed by field.
func checkModel(get func(key string) string, id int64) (admin.ModelForm, store.ModelFields) {
	f := admin.ModelForm{
		ID:            id,
		Name:          strings.TrimSpace(get("name")),
		DisplayName:   strings.TrimSpace(get("display_name")),
		Family:        strings.TrimSpace(get("family")),
		ParamsB:       strings.TrimSpace(get("params_b")),
		Quantization:  strings.ToLower(strings.TrimSpace(get("quantization"))),
		ContextLength: strings.TrimSpace(get("context_length")),
		License:       strings.TrimSpace(get("license")),
		MemoryGB:      strings.TrimSpace(get("memory_gb")),
		BaseModelID:   strings.TrimSpace(get("base_model_id")),
		Adapter:       get("adapter") != "" && get("adapter") != "false",
		Errors:        map[string]string{},
	}
	out := store.ModelFields{Name: f.Name, DisplayName: f.DisplayName, Family: f.Family, Quantization: f.Quantization,
		License: f.License, Adapter: f.Adapter}
	if jobs.CheckModelName(f.Name) != nil {
		f.Errors["name"] = "Enter a model id such as Qwen/Qwen2.5-7B-Instruct (letters, digits, . _ : - and one /)."
	}
	for field, v := range map[string]string{"display_name": f.DisplayName, "family": f.Family, "license": f.License} {
		if len(v) > 200 || !dataset.IsText(v) {
			f.Errors[field] = "At most 200 characters of text (UTF-8, no NUL characters)."
		}
	}
	// parseFinite: NaN passes every "x <= lo || x > hi" check.
	if p, err := parseFinite("params_b", f.ParamsB); err != nil || p <= 0 || p > 10000 {
		f.Errors["params_b"] = "Enter the parameter count in billions, such as 7 or 0.5."
	} else {
		out.ParamsB = p
	}
	if !advise.KnownQuantization(f.Quantization) {
		f.Errors["quantization"] = "Choose a quantisation from the list."
	}
	if n, err := strconv.Atoi(f.ContextLength); err != nil || n < 1 || n > 10_000_000 {
		f.Errors["context_length"] = "Enter the context length in tokens, such as 32768."
	} else {
		out.ContextLength = n
	}
	if f.MemoryGB != "" {
		if m, err := parseFinite("memory_gb", f.MemoryGB); err != nil || m <= 0 || m > 100000 {
			f.Errors["memory_gb"] = "Enter the memory in GB, or leave it empty to estimate it."
		} else {
			out.MemoryGB = &m
		}
	}
	if f.BaseModelID != "" {
		if b, err := parseID("base_model_id", f.BaseModelID); err != nil || b == id {
			f.Errors["base_model_id"] = "Choose another model as the base."
		} else {
			out.BaseModelID = &b
		}
	}
	if f.Adapter && out.BaseModelID == nil {
		f.Errors["base_model_id"] = "An adapter needs its base model."
	}
	return f, out
}

func (s *server) showModelsPage(c *fiber.Ctx) error {
	return s.modelsResult(c, fiber.StatusOK, admin.ModelsData{})
}

func (s *server) modelsResult(c *fiber.Ctx, status int, d admin.ModelsData) error {
	ms, err := s.Store.ListModels(c.UserContext())
	if err != nil {
		return err
	}
	d.Models = ms
	return render(c, status, admin.ModelsPage(d))
}

func (s *server) createModel(c *fiber.Ctx) error {
	form, fields := parseModelForm(c, 0)
	if len(form.Errors) == 0 {
		_, err := s.Store.CreateModel(c.UserContext(), fields)
		switch {
		case errors.Is(err, store.ErrModelNameTaken):
			form.Errors["name"] = "A model with this name is already registered."
		case err != nil:
			return err
		default:
			return s.modelsResult(c, fiber.StatusOK, admin.ModelsData{Saved: fmt.Sprintf("Model %s added.", fields.Name)})
		}
	}
	return s.modelsResult(c, fiber.StatusUnprocessableEntity, admin.ModelsData{Form: form})
}

func (s *server) modelParam(c *fiber.Ctx) (store.Model, error) {
	id, err := idParam(c, "id", "model")
	if err != nil {
		return store.Model{}, err
	}
	m, err := s.Store.ModelByID(c.UserContext(), id)
	if errors.Is(err, store.ErrNotFound) {
		return m, fiber.NewError(fiber.StatusNotFound, "There is no such model.")
	}
	return m, err
}

func (s *server) showModelEditPage(c *fiber.Ctx) error {
	m, err := s.modelParam(c)
	if err != nil {
		return err
	}
	ms, err := s.Store.ListModels(c.UserContext())
	if err != nil {
		return err
	}
	f := admin.ModelForm{ID: m.ID, Name: m.Name, DisplayName: m.DisplayName, Family: m.Family,
		ParamsB: strconv.FormatFloat(m.ParamsB, 'g', -1, 64), Quantization: m.Quantization,
		ContextLength: strconv.Itoa(m.ContextLength), License: m.License, Adapter: m.Adapter}
	if m.MemoryGB != nil {
		f.MemoryGB = strconv.FormatFloat(*m.MemoryGB, 'g', -1, 64)
	}
	if m.BaseModelID != nil {
		f.BaseModelID = strconv.FormatInt(*m.BaseModelID, 10)
	}
	return render(c, fiber.StatusOK, admin.ModelEditPage(f, ms))
}

func (s *server) updateModel(c *fiber.Ctx) error {
	m, err := s.modelParam(c)
	if err != nil {
		return err
	}
	form, fields := parseModelForm(c, m.ID)
	if len(form.Errors) == 0 {
		err := s.Store.UpdateModel(c.UserContext(), m.ID, fields)
		switch {
		case errors.Is(err, store.ErrModelNameTaken):
			form.Errors["name"] = "A model with this name is already registered."
		case err != nil:
			return err
		default:
			if err := s.flash(c, "info", fmt.Sprintf("Model %s saved.", fields.Name)); err != nil {
				return err
			}
			return redirect(c, "/admin/models")
		}
	}
	ms, err := s.Store.ListModels(c.UserContext())
	if err != nil {
		return err
	}
	return render(c, fiber.StatusUnprocessableEntity, admin.ModelEditPage(form, ms))
}

func (s *server) setModelRetired(retired bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		m, err := s.modelParam(c)
		if err != nil {
			return err
		}
		if err := s.Store.SetModelRetired(c.UserContext(), m.ID, retired); err != nil {
			return err
		}
		return redirect(c, "/admin/models")
	}
}
