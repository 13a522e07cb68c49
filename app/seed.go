package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
)

// seedStarterDatasets stores the starter datasets, shared and owned by the
// first administrator, unless they are there already.
func seedStarterDatasets(ctx context.Context, up *ingest.Uploader, out io.Writer) error {
	n, err := up.Store.CountStarterDatasets(ctx)
	if err != nil || n > 0 {
		return err
	}
	admin, err := up.Store.FirstAdmin(ctx)
	if err != nil {
		return fmt.Errorf("seed starter datasets: %w", err)
	}
	for _, d := range starter.All {
		b, err := starter.Open(d)
		if err != nil {
			return err
		}
		res, err := up.Upload(ctx, bytes.NewReader(b), ingest.Request{
			Viewer: store.Viewer{UserID: admin.ID, Admin: true}, FileName: d.File, Name: d.Name,
			Visibility: store.VisibilityShared, AllowDuplicate: true, Starter: true,
		}, nil)
		if err != nil {
			return fmt.Errorf("seed %s: %w %v", d.File, err, res.Errors)
		}
		fmt.Fprintf(out, "seeded starter dataset %q (%d items)\n", res.Dataset.Name, res.Dataset.ItemCount)
	}
	return nil
}
