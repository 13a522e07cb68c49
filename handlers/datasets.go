package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/datasets"
)

type datasetStore interface {
	ListDatasets(ctx context.Context, v store.Viewer) ([]store.Dataset, error)
	DatasetByID(ctx context.Context, v store.Viewer, id int64) (store.Dataset, error)
	DatasetItems(ctx context.Context, datasetID int64, after, limit int) ([]store.DatasetItem, error)
	DeleteDataset(ctx context.Context, v store.Viewer, id int64) (soft bool, err error)
}

// Uploader stores an uploaded dataset; *ingest.Uploader satisfies it.
type Uploader interface {
	Upload(ctx context.Context, file io.Reader, req ingest.Request, rest func(*ingest.Request) error) (ingest.Result, error)
}

func viewer(c *fiber.Ctx) store.Viewer {
	u := currentUser(c)
	return store.Viewer{UserID: u.ID, Admin: u.IsAdmin()}
}

func (s *server) showDatasetsPage(c *fiber.Ctx) error {
	return s.datasetsPage(c, fiber.StatusOK, datasets.UploadState{})
}

func (s *server) datasetsPage(c *fiber.Ctx, status int, up datasets.UploadState) error {
	ds, err := s.Store.ListDatasets(c.UserContext(), viewer(c))
	if err != nil {
		return err
	}
	return render(c, status, datasets.ListPage(datasets.ListData{Datasets: ds, Upload: up, MaxBytes: s.DatasetLimits.MaxFileBytes}))
}

// uploadOutcome is an upload's result in the terms both the page and the
// API answer with.
type uploadOutcome struct {
	status int
	res    ingest.Result
	req    ingest.Request
	msg    string
}

// receiveUpload streams a multipart upload (fields name, visibility,
// allow_duplicate, file, in any order) into the uploader. The body is
// never held in memory.
func (s *server) receiveUpload(c *fiber.Ctx) (uploadOutcome, error) {
	out := uploadOutcome{req: ingest.Request{Viewer: viewer(c), Visibility: store.VisibilityPrivate}}
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		out.status, out.msg = fiber.StatusUnsupportedMediaType, `send the file as multipart/form-data in the field "file"`
		return out, nil
	}
	body := io.LimitReader(c.Context().RequestBodyStream(), s.DatasetLimits.MaxFileBytes+1<<20)
	// Read what follows the closing boundary (an epilogue, the end of a
	// chunked body), so the connection is left at the next request.
	defer io.Copy(io.Discard, io.LimitReader(body, 1<<20)) //nolint:errcheck // best effort
	mr := multipart.NewReader(body, params["boundary"])
	if err := checkUploadCSRF(c, mr); err != nil {
		return out, err
	}
	if raw := strings.TrimSpace(c.Query("shots")); raw != "" {
		k, le := parseShots(raw)
		if le != nil {
			out.status, out.res.Errors, out.res.ErrorCount = fiber.StatusUnprocessableEntity, []dataset.LineError{*le}, 1
			return out, nil
		}
		out.req.Shots = k
	}
	fileRead := false
	readField := func(p *multipart.Part, req *ingest.Request) error {
		v, err := io.ReadAll(io.LimitReader(p, 1024))
		if err != nil {
			return err
		}
		val := strings.TrimSpace(string(v))
		switch p.FormName() {
		case "shots":
			// The prompts are made while the file is read, so the
			// number of shots must be known before it.
			if fileRead {
				return &dataset.LineError{Field: "shots", Message: `send "shots" before the file (or as the query parameter ?shots=)`}
			}
			k, le := parseShots(val)
			if le != nil {
				return le
			}
			req.Shots = k
		case "name":
			req.Name = val
		case "visibility":
			req.Visibility = val
		case "allow_duplicate":
			req.AllowDuplicate = val == "1" || val == "true" || val == "on"
		}
		return nil
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			out.status = fiber.StatusUnprocessableEntity
			out.res.Errors = []dataset.LineError{{Field: "file", Message: `no file was sent: use the multipart field "file"`}}
			out.res.ErrorCount = 1
			return out, nil
		}
		if err != nil {
			out.status, out.msg = fiber.StatusBadRequest, "the upload could not be read: "+err.Error()
			return out, nil
		}
		if p.FormName() != "file" {
			if err := readField(p, &out.req); err != nil {
				var le *dataset.LineError
				if errors.As(err, &le) {
					out.status, out.res.Errors, out.res.ErrorCount = fiber.StatusUnprocessableEntity, []dataset.LineError{*le}, 1
					return out, nil
				}
				out.status, out.msg = fiber.StatusBadRequest, "the upload could not be read: "+err.Error()
				return out, nil
			}
			continue
		}
		fileRead = true
		out.req.FileName = p.FileName()
		res, err := s.Uploader.Upload(c.UserContext(), p, out.req, func(req *ingest.Request) error {
			for {
				p, err := mr.NextPart()
				if errors.Is(err, io.EOF) {
					out.req = *req
					return nil
				}
				if err != nil {
					return err
				}
				if err := readField(p, req); err != nil {
					return err
				}
			}
		})
		out.res = res
		switch {
		case err == nil:
			out.status = fiber.StatusCreated
		case errors.Is(err, ingest.ErrInvalid):
			out.status = fiber.StatusUnprocessableEntity
		case errors.Is(err, ingest.ErrDuplicate):
			out.status = fiber.StatusConflict
		case errors.Is(err, ingest.ErrUnreadable):
			out.status, out.msg = fiber.StatusBadRequest, err.Error()
		default:
			return out, err
		}
		return out, nil
	}
}

// parseShots reads the k of k-shot prompts from a form or query value.
func parseShots(raw string) (int, *dataset.LineError) {
	if raw == "" {
		return 0, nil
	}
	k, err := strconv.Atoi(raw)
	if err != nil {
		return 0, &dataset.LineError{Field: "shots", Message: fmt.Sprintf("shots must be a whole number from 0 to %d", dataset.MaxShots)}
	}
	if le := ingest.CheckShots(k); le != nil {
		return 0, le
	}
	return k, nil
}

func (s *server) uploadDataset(c *fiber.Ctx) error {
	out, err := s.receiveUpload(c)
	if err != nil {
		return err
	}
	if out.status == fiber.StatusCreated {
		s.Logger.Info("dataset uploaded", "id", out.res.Dataset.ID, "items", out.res.Dataset.ItemCount, "bytes", out.res.Dataset.Bytes)
		if err := s.flash(c, "info", fmt.Sprintf("Dataset “%s” stored: %d items.", out.res.Dataset.Name, out.res.Dataset.ItemCount)); err != nil {
			return err
		}
		return redirect(c, fmt.Sprintf("/datasets/%d", out.res.Dataset.ID))
	}
	up := datasets.UploadState{
		Errors: out.res.Errors, ErrorCount: out.res.ErrorCount, Duplicates: out.res.Duplicates,
		Message: out.msg, Name: out.req.Name, Visibility: out.req.Visibility, Shots: out.req.Shots,
	}
	if c.Get("HX-Request") != "" {
		return render(c, out.status, datasets.UploadResult(up))
	}
	return s.datasetsPage(c, out.status, up)
}

const noSuchDataset = "There is no such dataset."

func (s *server) datasetParam(c *fiber.Ctx) (store.Dataset, error) {
	id, err := idParam(c, "id", "dataset")
	if err != nil {
		return store.Dataset{}, err
	}
	d, err := s.Store.DatasetByID(c.UserContext(), viewer(c), id)
	if errors.Is(err, store.ErrNotFound) {
		return d, fiber.NewError(fiber.StatusNotFound, noSuchDataset)
	}
	return d, err
}

func (s *server) showDatasetPage(c *fiber.Ctx) error {
	d, err := s.datasetParam(c)
	if err != nil {
		return err
	}
	items, err := s.Store.DatasetItems(c.UserContext(), d.ID, -1, 20)
	if err != nil {
		return err
	}
	v := viewer(c)
	return render(c, fiber.StatusOK, datasets.DetailPage(datasets.DetailData{Dataset: d, Items: items, CanEdit: v.Admin || v.UserID == d.OwnerID}))
}

func (s *server) deleteDataset(c *fiber.Ctx) error {
	d, err := s.datasetParam(c)
	if err != nil {
		return err
	}
	if d.DeletedAt != nil {
		return fiber.NewError(fiber.StatusNotFound, "This dataset is deleted already.")
	}
	soft, err := s.Store.DeleteDataset(c.UserContext(), viewer(c), d.ID)
	if errors.Is(err, store.ErrNotFound) {
		return fiber.NewError(fiber.StatusForbidden, "Only the owner or an administrator may delete this dataset.")
	}
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Dataset “%s” deleted.", d.Name)
	if soft {
		msg = fmt.Sprintf("Dataset “%s” deleted: it can no longer be used, and its items stay for the results of the benchmarks that used it.", d.Name)
	}
	if err := s.flash(c, "info", msg); err != nil {
		return err
	}
	return redirect(c, "/datasets")
}
