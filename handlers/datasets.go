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
	"github.com/ruckus/ruckus/app/i18n"
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

// Uploader makes datasets, uploaded and generated; *ingest.Uploader
// satisfies it.
type Uploader interface {
	Upload(ctx context.Context, src ingest.Source, req ingest.Request) (ingest.Result, error)
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
	// key and args are msg in the catalogue, when the handler said it; a
	// page shows it in the reader's language.
	key  string
	args []any
}

// receiveUpload streams a multipart upload (fields name, visibility,
// allow_duplicate, file, in any order) into the uploader. The body is
// never held in memory.
func (s *server) receiveUpload(c *fiber.Ctx) (uploadOutcome, error) {
	out := uploadOutcome{req: ingest.Request{Viewer: viewer(c), Visibility: store.VisibilityPrivate}}
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return out.refused(fiber.StatusUnsupportedMediaType, "upload.not_multipart"), nil
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
			return out.lineError(*le), nil
		}
		out.req.Shots = k
	}
	out.req.Exemplars = strings.TrimSpace(c.Query("exemplars"))
	var fields uploadFields
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out.lineError(*dataset.NewLineError("file", "dataset_err.no_file_sent")), nil
		}
		if err != nil {
			return out.refused(fiber.StatusBadRequest, "upload.unreadable", "Error", err.Error()), nil
		}
		if p.FormName() == "file" {
			fields.fileRead = true
			return s.uploadFile(c, mr, p, out, &fields)
		}
		if err := fields.read(p, &out.req); err != nil {
			var le *dataset.LineError
			if errors.As(err, &le) {
				return out.lineError(*le), nil
			}
			return out.refused(fiber.StatusBadRequest, "upload.unreadable", "Error", err.Error()), nil
		}
	}
}

// uploadFile streams the file part p into the uploader, which reads the
// fields after it (mr's further parts) when it needs them.
func (s *server) uploadFile(c *fiber.Ctx, mr *multipart.Reader, p *multipart.Part, out uploadOutcome, fields *uploadFields) (uploadOutcome, error) {
	out.req.FileName = p.FileName()
	res, err := s.Uploader.Upload(c.UserContext(), ingest.Source{File: p, Rest: func(req *ingest.Request) error {
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				out.req = *req
				return nil
			}
			if err != nil {
				return err
			}
			if err := fields.read(p, req); err != nil {
				return err
			}
		}
	}}, out.req)
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

// refused is the outcome answered with status and the catalogue's message
// key, its placeholders filled from args (name/value pairs): in English for
// the API, in the reader's language on the page (message).
func (o uploadOutcome) refused(status int, key string, args ...any) uploadOutcome {
	o.status, o.key, o.args = status, key, args
	o.msg = i18n.Default().Lang(i18n.Languages[0].Code).T(key, args...)
	return o
}

// message is the outcome's message for the page: in the reader's language
// when the handler said it, else as the uploader gave it.
func (o uploadOutcome) message(c *fiber.Ctx) string {
	if o.key != "" {
		return i18n.T(c.UserContext(), o.key, o.args...)
	}
	return o.msg
}

// lineError is the outcome answered 422 with one error about the request.
func (o uploadOutcome) lineError(le dataset.LineError) uploadOutcome {
	o.status, o.res.Errors, o.res.ErrorCount = fiber.StatusUnprocessableEntity, []dataset.LineError{le}, 1
	return o
}

// uploadFields reads an upload's fields other than the file.
type uploadFields struct {
	// fileRead is set once the file part has begun.
	fileRead bool
}

// read reads field p into req.
func (u *uploadFields) read(p *multipart.Part, req *ingest.Request) error {
	v, err := io.ReadAll(io.LimitReader(p, 1024))
	if err != nil {
		return err
	}
	val := strings.TrimSpace(string(v))
	switch p.FormName() {
	case "shots":
		// The prompts are made while the file is read, so the number of
		// shots must be known before it.
		if u.fileRead {
			return dataset.NewLineError("shots", "dataset_err.shots_before_file")
		}
		k, le := parseShots(val)
		if le != nil {
			return le
		}
		req.Shots = k
	case "exemplars":
		if u.fileRead {
			return dataset.NewLineError("exemplars", "dataset_err.exemplars_before_file")
		}
		req.Exemplars = val
	case "name":
		req.Name = val
	case "visibility":
		req.Visibility = val
	case "allow_duplicate":
		req.AllowDuplicate = val == "1" || val == "true" || val == "on"
	}
	return nil
}

// parseShots reads the k of k-shot prompts from a form or query value.
func parseShots(raw string) (int, *dataset.LineError) {
	if raw == "" {
		return 0, nil
	}
	k, err := strconv.Atoi(raw)
	if err != nil {
		return 0, dataset.NewLineError("shots", "dataset_err.shots_whole_number_from", "A", dataset.MaxShots)
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
		if err := s.flash(c, "info", i18n.N(c.UserContext(), "upload.stored", out.res.Dataset.ItemCount, "Name", out.res.Dataset.Name)); err != nil {
			return err
		}
		return redirect(c, fmt.Sprintf("/datasets/%d", out.res.Dataset.ID))
	}
	up := datasets.UploadState{
		Errors: out.res.Errors, ErrorCount: out.res.ErrorCount, Duplicates: out.res.Duplicates,
		Message: out.message(c), Name: out.req.Name, Visibility: out.req.Visibility, Shots: out.req.Shots, Exemplars: out.req.Exemplars,
	}
	if c.Get("HX-Request") != "" {
		return render(c, out.status, datasets.UploadResult(up))
	}
	return s.datasetsPage(c, out.status, up)
}

func (s *server) datasetParam(c *fiber.Ctx) (store.Dataset, error) {
	id, err := idParam(c, "id", "dataset")
	if err != nil {
		return store.Dataset{}, err
	}
	d, err := s.Store.DatasetByID(c.UserContext(), viewer(c), id)
	return d, lookup("dataset", err)
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
		return catalogueErr(fiber.StatusNotFound, "upload.deleted_already")
	}
	soft, err := s.Store.DeleteDataset(c.UserContext(), viewer(c), d.ID)
	if errors.Is(err, store.ErrNotFound) {
		return catalogueErr(fiber.StatusForbidden, "upload.delete_forbidden")
	}
	if err != nil {
		return err
	}
	key := "upload.deleted"
	if soft {
		key = "upload.deleted_kept"
	}
	if err := s.flashKey(c, "info", key, "Name", d.Name); err != nil {
		return err
	}
	return redirect(c, "/datasets")
}
