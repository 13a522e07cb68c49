package handlers

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
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
func (s *server) parseModelForm(c *fiber.Ctx, id int64) (admin.ModelForm, store.ModelFields) {
	return s.checkModel(c.UserContext(), func(k string) string { return c.FormValue(k) }, id)
}

// modelRequest is a model's fields as registered: typed, each with its
// rules (tags) and the message shown beside its field (msg).
type modelRequest struct {
	ID            int64    `json:"-"`
	Name          string   `json:"name" validate:"model_name" msg:"valid.model_id"`
	DisplayName   string   `json:"display_name" validate:"max=200,text" msg:"valid.text_200"`
	Family        string   `json:"family" validate:"max=200,text" msg:"valid.text_200"`
	License       string   `json:"license" validate:"max=200,text" msg:"valid.text_200"`
	ParamsB       float64  `json:"params_b" validate:"finite,gt=0,lte=10000" msg:"valid.params_b"`
	Quantization  string   `json:"quantization" validate:"quantization" msg:"valid.quantization_choice"`
	ContextLength int      `json:"context_length" validate:"min=1,max=10000000" msg:"valid.context_length"`
	MemoryGB      *float64 `json:"memory_gb" validate:"omitnil,finite,gt=0,lte=100000" msg:"valid.memory_gb"`
	BaseModelID   *int64   `json:"base_model_id" validate:"required_if=Adapter true,omitnil,min=1,nefield=ID" msg:"valid.base_model_other" msg_required_if:"valid.base_model_needed"`
	Adapter       bool     `json:"adapter"`
}

// checkModel reads the model's fields by name from get (a form or a JSON
// body) and checks them; errors are keyed by field. A number that does
// not parse becomes one its field's rules refuse (NaN, 0), so it is told
// so in the same words.
func (s *server) checkModel(ctx context.Context, get func(key string) string, id int64) (admin.ModelForm, store.ModelFields) {
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
	}
	req := modelRequest{ID: id, Name: f.Name, DisplayName: f.DisplayName, Family: f.Family, License: f.License,
		Quantization: f.Quantization, Adapter: f.Adapter, ParamsB: math.NaN()}
	if p, err := parseFinite("params_b", f.ParamsB); err == nil {
		req.ParamsB = p
	}
	if n, err := strconv.Atoi(f.ContextLength); err == nil {
		req.ContextLength = n
	}
	if f.MemoryGB != "" {
		m := math.NaN()
		if v, err := parseFinite("memory_gb", f.MemoryGB); err == nil {
			m = v
		}
		req.MemoryGB = &m
	}
	if f.BaseModelID != "" {
		b, _ := parseID("base_model_id", f.BaseModelID)
		req.BaseModelID = &b
	}
	f.Errors = s.validate.Struct(req).MapText(ctx)
	return f, store.ModelFields{Name: req.Name, DisplayName: req.DisplayName, Family: req.Family, Quantization: req.Quantization,
		License: req.License, Adapter: req.Adapter, ParamsB: req.ParamsB, ContextLength: req.ContextLength,
		MemoryGB: req.MemoryGB, BaseModelID: req.BaseModelID}
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
	form, fields := s.parseModelForm(c, 0)
	if len(form.Errors) == 0 {
		_, err := s.Store.CreateModel(c.UserContext(), fields)
		switch {
		case errors.Is(err, store.ErrModelNameTaken):
			form.Errors["name"] = i18n.T(c.UserContext(), "admin_models.name_taken")
		case err != nil:
			return err
		default:
			return s.modelsResult(c, fiber.StatusOK, admin.ModelsData{Saved: i18n.T(c.UserContext(), "admin_models.added", "Name", fields.Name)})
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
	return m, lookup("model", err)
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
	form, fields := s.parseModelForm(c, m.ID)
	if len(form.Errors) == 0 {
		err := s.Store.UpdateModel(c.UserContext(), m.ID, fields)
		switch {
		case errors.Is(err, store.ErrModelNameTaken):
			form.Errors["name"] = i18n.T(c.UserContext(), "admin_models.name_taken")
		case err != nil:
			return err
		default:
			if err := s.flashKey(c, "info", "admin_models.saved", "Name", fields.Name); err != nil {
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
