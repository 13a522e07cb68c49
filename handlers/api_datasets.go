package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/store"
)

// apiDataset is a dataset as the JSON API shows it.
type apiDataset struct {
	ID            int64     `json:"dataset_id"`
	Name          string    `json:"name"`
	Format        string    `json:"format"`
	Count         int       `json:"count"`
	Bytes         int64     `json:"bytes"`
	SHA256        string    `json:"sha256"`
	UploadedAt    time.Time `json:"uploaded_at"`
	Owner         string    `json:"owner"`
	Visibility    string    `json:"visibility"`
	TaskKind      string    `json:"task_kind"`
	DefaultScorer string    `json:"default_scorer"`
	Shots         int       `json:"shots"`
}

func toAPIDataset(d store.Dataset) apiDataset {
	return apiDataset{ID: d.ID, Name: d.Name, Format: d.Format, Count: d.ItemCount, Bytes: d.Bytes, SHA256: d.SHA256,
		UploadedAt: d.CreatedAt, Owner: d.OwnerEmail, Visibility: d.Visibility, TaskKind: d.TaskKind, DefaultScorer: d.DefaultScorer,
		Shots: d.Shots}
}

func (s *server) apiUploadDataset(c *fiber.Ctx) error {
	out, err := s.receiveUpload(c)
	if err != nil {
		return err
	}
	switch out.status {
	case fiber.StatusCreated:
		return c.Status(fiber.StatusCreated).JSON(toAPIDataset(out.res.Dataset))
	case fiber.StatusConflict:
		existing := make([]apiDataset, len(out.res.Duplicates))
		for i, d := range out.res.Duplicates {
			existing[i] = toAPIDataset(d)
		}
		return c.Status(fiber.StatusConflict).JSON(apiDuplicateDataset{
			Error:    "an identical dataset exists; reuse it, or send allow_duplicate=true to store a copy",
			Existing: existing,
		})
	case fiber.StatusUnprocessableEntity:
		errs := out.res.Errors
		if errs == nil {
			errs = []dataset.LineError{}
		}
		return c.Status(out.status).JSON(apiLineErrors{Errors: errs, ErrorCount: out.res.ErrorCount})
	}
	return c.Status(out.status).JSON(apiError{Error: out.msg})
}

func (s *server) apiListDatasets(c *fiber.Ctx) error {
	ds, err := s.Store.ListDatasets(c.UserContext(), viewer(c))
	if err != nil {
		return err
	}
	out := make([]apiDataset, len(ds))
	for i, d := range ds {
		out[i] = toAPIDataset(d)
	}
	return c.JSON(apiDatasets{Datasets: out})
}

// apiGetDataset answers one dataset; a generated one with the spec it was
// generated from, as its creation answered (docs/workloads.md).
func (s *server) apiGetDataset(c *fiber.Ctx) error {
	d, err := s.datasetParam(c)
	if err != nil {
		return err
	}
	gen, err := s.Store.DatasetGenerator(c.UserContext(), viewer(c), d.ID)
	if err != nil {
		return err
	}
	return c.JSON(struct {
		apiDataset
		Generator json.RawMessage `json:"generator,omitempty"`
	}{toAPIDataset(d), gen})
}

// apiDatasetItems pages through items by index: ?after=<cursor>&limit=N.
func (s *server) apiDatasetItems(c *fiber.Ctx) error {
	d, err := s.datasetParam(c)
	if err != nil {
		return err
	}
	after, limit := -1, 100
	if v := c.Query("after"); v != "" {
		n, err := parseIdx("after", v)
		if err != nil {
			return fiber.NewError(fiber.StatusBadRequest, err.Error()+": use a cursor returned as next")
		}
		after = n
	}
	if v := c.Query("limit"); v != "" {
		n, err := parseIdx("limit", v)
		if err != nil || n < 1 || n > 1000 {
			return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("limit must be between 1 and 1000 (got %q)", v))
		}
		limit = n
	}
	items, err := s.Store.DatasetItems(c.UserContext(), d.ID, after, limit)
	if err != nil {
		return err
	}
	type apiItem struct {
		CustomID  string          `json:"custom_id"`
		Request   json.RawMessage `json:"request"`
		Reference json.RawMessage `json:"reference"`
		Category  string          `json:"category,omitempty"`
	}
	out := make([]apiItem, len(items))
	for i, it := range items {
		ref := it.Reference
		if ref == nil {
			ref = json.RawMessage("null")
		}
		out[i] = apiItem{CustomID: it.CustomID, Request: it.Request, Reference: ref, Category: it.Category}
	}
	var next *string
	if len(items) == limit {
		next = new(strconv.Itoa(items[len(items)-1].Idx))
	}
	return c.JSON(struct {
		Items []apiItem `json:"items"`
		Next  *string   `json:"next"`
	}{out, next})
}

func (s *server) apiDeleteDataset(c *fiber.Ctx) error {
	d, err := s.datasetParam(c)
	if err != nil {
		return err
	}
	if d.DeletedAt != nil {
		return fiber.NewError(fiber.StatusNotFound, "this dataset is deleted already")
	}
	_, err = s.Store.DeleteDataset(c.UserContext(), viewer(c), d.ID)
	if errors.Is(err, store.ErrNotFound) {
		return fiber.NewError(fiber.StatusForbidden, "only the owner or an administrator may delete this dataset")
	}
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
