package handlers

import (
	"context"
	"maps"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/datasets"
)

type variantsStore interface {
	DatasetVariantRuns(ctx context.Context, v store.Viewer, datasetID int64, limit int) ([]store.VariantRun, error)
	RunQualities(ctx context.Context, runIDs []int64) (map[int64][]store.Quality, error)
	conclude.PairSource
	RunItemScores(ctx context.Context, key string, runIDs []int64) (map[int64]store.ItemScores, error)
	DatasetItemCategories(ctx context.Context, datasetID int64) (map[int32]string, error)
}

// variantRuns is how many of a dataset's scored runs (the newest) the
// variants page weighs.
const variantRuns = 200

// showVariantsPage is a dataset's variants: each model family's base
// model beside its fine-tunes, adapters and runs at other shots, with
// their differences overall and per category, under one scorer identity.
func (s *server) showVariantsPage(c *fiber.Ctx) error {
	d, err := s.datasetParam(c)
	if err != nil {
		return err
	}
	fams, err := s.variantFamilies(c.UserContext(), viewer(c), d.ID)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, datasets.VariantsPage(datasets.VariantsData{Dataset: d, Families: fams}))
}

// variantFamilies plans the dataset's families and compares each
// variant with its baseline from the kept paired comparisons and the
// runs' kept item scores.
func (s *server) variantFamilies(ctx context.Context, v store.Viewer, datasetID int64) ([]conclude.VariantFamily, error) {
	runs, err := s.Store.DatasetVariantRuns(ctx, v, datasetID, variantRuns)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	qs, err := s.Store.RunQualities(ctx, ids)
	if err != nil {
		return nil, err
	}
	fams := conclude.PlanVariants(runs, qs)
	if len(fams) == 0 {
		return fams, nil
	}
	cats, err := s.Store.DatasetItemCategories(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	for i := range fams {
		f := &fams[i]
		others := make([]int64, len(f.Rows))
		for j, r := range f.Rows {
			others[j] = r.RunID
		}
		pairs, err := conclude.QualityPairsWith(ctx, s.Store, f.Baseline.ScorerKey, f.Baseline.RunID, others)
		if err != nil {
			return nil, err
		}
		var ev conclude.Evidence
		for _, p := range pairs {
			ev.Paired = append(ev.Paired, conclude.Diff(p))
		}
		// Each run's item scores under its own identity (a k-shot run's
		// carries its k).
		byKey := map[string][]int64{f.Baseline.ScorerKey: {f.Baseline.RunID}}
		for _, r := range f.Rows {
			byKey[r.ScorerKey] = append(byKey[r.ScorerKey], r.RunID)
		}
		items := map[int64]store.ItemScores{}
		for key, ids := range byKey {
			got, err := s.Store.RunItemScores(ctx, key, ids)
			if err != nil {
				return nil, err
			}
			maps.Copy(items, got)
		}
		f.Compare(ev, items, cats)
	}
	return fams, nil
}
