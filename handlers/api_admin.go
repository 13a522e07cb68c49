package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
)

// apiFieldErrors answers 422 with one entry per field, in the one error
// shape of every API ({"errors":[{"path","message"}]}), ordered by path.
func apiFieldErrors(c *fiber.Ctx, errs map[string]string) error {
	out := make(valid.Errors, 0, len(errs))
	for f, m := range errs {
		out = append(out, valid.FieldError{Path: f, Message: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: out})
}

// modelKeys are the fields a model is written with, the same names it is
// read with (apiModel).
var modelKeys = []string{"name", "display_name", "family", "params_b", "quantization", "context_length", "license",
	"memory_gb", "base_model_id", "adapter"}

// jsonFields decodes a flat JSON object into strings by key, so the API
// checks a model with the same rules as the admin form. Keys that are not
// among keys come back as unknown (to answer 422 naming them), not
// dropped: a misspelt field would otherwise be saved as if it had not
// been sent.
func jsonFields(body []byte, keys []string) (get func(string) string, unknown map[string]string, err error) {
	raw := map[string]json.RawMessage{}
	if errs := valid.DecodeJSON(body, &raw); errs != nil {
		return nil, nil, fiber.NewError(fiber.StatusBadRequest, "the body must be a JSON object: "+errs.Error())
	}
	for k := range raw {
		if !slices.Contains(keys, k) {
			if unknown == nil {
				unknown = map[string]string{}
			}
			unknown[k] = "unknown field " + strconv.Quote(k) + "; the fields are " + strings.Join(keys, ", ")
		}
	}
	return func(k string) string {
		v, ok := raw[k]
		if !ok || string(v) == "null" {
			return ""
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return strings.TrimSpace(string(v))
	}, unknown, nil
}

// apiCreateModel registers a model (admins): 201 {"model_id"}.
func (s *server) apiCreateModel(c *fiber.Ctx) error {
	get, unknown, err := jsonFields(c.Body(), modelKeys)
	if err != nil {
		return err
	}
	if unknown != nil {
		return apiFieldErrors(c, unknown)
	}
	form, fields := s.checkModel(context.Background(), get, 0)
	if len(form.Errors) > 0 {
		return apiFieldErrors(c, form.Errors)
	}
	id, err := s.Store.CreateModel(c.UserContext(), fields)
	if errors.Is(err, store.ErrModelNameTaken) {
		return apiFieldErrors(c, map[string]string{"name": "a model with this name is already registered"})
	}
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(apiModelSaved{ModelID: id, Name: fields.Name})
}

// apiUpdateModel replaces a model's fields (admins).
func (s *server) apiUpdateModel(c *fiber.Ctx) error {
	m, err := s.modelParam(c)
	if err != nil {
		return err
	}
	get, unknown, err := jsonFields(c.Body(), modelKeys)
	if err != nil {
		return err
	}
	if unknown != nil {
		return apiFieldErrors(c, unknown)
	}
	form, fields := s.checkModel(context.Background(), get, m.ID)
	if len(form.Errors) > 0 {
		return apiFieldErrors(c, form.Errors)
	}
	err = s.Store.UpdateModel(c.UserContext(), m.ID, fields)
	if errors.Is(err, store.ErrModelNameTaken) {
		return apiFieldErrors(c, map[string]string{"name": "a model with this name is already registered"})
	}
	if err != nil {
		return err
	}
	return c.JSON(apiModelSaved{ModelID: m.ID, Name: fields.Name})
}

// apiSetModelRetired retires or restores a model (admins).
func (s *server) apiSetModelRetired(retired bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		m, err := s.modelParam(c)
		if err != nil {
			return err
		}
		if err := s.Store.SetModelRetired(c.UserContext(), m.ID, retired); err != nil {
			return err
		}
		return c.JSON(apiModelRetired{ModelID: m.ID, Retired: retired})
	}
}

// apiAgentAction drains, undrains, deactivates or reactivates an agent
// (admins).
func (s *server) apiAgentAction(action string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := idParam(c, "id", "agent")
		if err != nil {
			return err
		}
		ctx := c.UserContext()
		switch action {
		case "drain":
			err = s.Store.SetAgentDrained(ctx, id, true)
		case "undrain":
			err = s.Store.SetAgentDrained(ctx, id, false)
		case "deactivate":
			err = s.Store.SetAgentDeactivated(ctx, id, true)
		case "reactivate":
			err = s.Store.SetAgentDeactivated(ctx, id, false)
		}
		if err != nil {
			return lookup("agent", err)
		}
		s.Logger.Info("agent changed", "by", currentUser(c).ID, "agent_id", id, "action", action)
		return c.JSON(apiAgentChanged{AgentID: id, Action: action})
	}
}

// apiListHardware lists hardware profiles with their prices and agents.
func (s *server) apiListHardware(c *fiber.Ctx) error {
	hs, err := s.Store.ListHardwareProfiles(c.UserContext(), s.AgentStaleAfter)
	if err != nil {
		return err
	}
	out := make([]apiHardwareProfile, len(hs))
	for i, h := range hs {
		out[i] = apiHardwareProfile{Slug: h.Slug, GPUName: h.GPUName, GPUCount: h.GPUCount, GPUMemoryBytes: h.GPUMemoryBytes,
			CPUCores: h.CPUCores, PricePerHour: h.PricePerHour, Agents: h.Agents, OnlineAgents: h.OnlineAgents}
	}
	return c.JSON(apiHardware{Hardware: out})
}

// apiSetHardwarePrice sets a profile's price per hour in USD, or clears it
// with null (admins).
func (s *server) apiSetHardwarePrice(c *fiber.Ctx) error {
	slug, err := slugParam(c, "slug")
	if err != nil {
		return err
	}
	var body struct {
		Price *float64 `json:"price_per_hour" validate:"omitnil,finite,min=0,max=1000000" msg:"valid.price_per_hour_api"`
	}
	errs := valid.DecodeJSON(c.Body(), &body)
	if errs == nil {
		errs = s.validate.Struct(body)
	}
	if errs != nil {
		return apiFieldErrors(c, errs.Map())
	}
	if err := s.Store.SetHardwarePrice(c.UserContext(), slug, body.Price); err != nil {
		return lookup("hardware profile", err)
	}
	return c.JSON(apiHardwarePrice{Slug: slug, PricePerHour: body.Price})
}
