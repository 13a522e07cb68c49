package handlers

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/benchmarks"
)

// defaultTargetRows is how many target rows a new form starts with: a
// benchmark usually compares two targets. "Add another target" adds more.
const defaultTargetRows = 2

// editBenchmarkForm applies the form's own buttons, for browsers without
// JavaScript: add a row, remove one, apply a load preset. It reports
// whether one was pressed (the form then comes back, nothing planned).
func editBenchmarkForm(c *fiber.Ctx, f benchmarks.Form) (benchmarks.Form, bool) {
	switch {
	case c.FormValue("add_target") != "":
		if next := f.NextTarget(); next < benchmarks.MaxTargetRows {
			f.Targets = append(f.Targets, benchmarks.TargetRow{Index: next})
		}
		return f, true
	case c.FormValue("remove_target") != "":
		i, err := strconv.Atoi(c.FormValue("remove_target"))
		if err == nil {
			rows := f.Targets[:0]
			for _, t := range f.Targets {
				if t.Index != i {
					rows = append(rows, t)
				}
			}
			f.Targets = rows
		}
		return f, true
	case c.FormValue("preset") != "":
		f.ApplyPreset(c.FormValue("preset"))
		return f, true
	}
	return f, false
}

// showTargetRowFragment renders one target row: a new one (add=1, with
// the add button for the row after it, out of band), or a row redrawn
// after its model or runtime changed, so the hardware it cannot fit on is
// greyed out. i is the row's index.
func (s *server) showTargetRowFragment(c *fiber.Ctx) error {
	i := 0
	if raw := c.Query("i"); raw != "" {
		n, err := parseIdx("i", raw)
		if err != nil || n >= benchmarks.MaxTargetRows {
			return catalogueErr(fiber.StatusUnprocessableEntity, "benchpage.bad_row", "Max", benchmarks.MaxTargetRows-1)
		}
		i = n
	}
	ch, err := s.benchmarkChoices(c)
	if err != nil {
		return err
	}
	rows := benchmarks.ReadTargetRows(func(k string) string { return c.Query(k) }, func(k string) bool { return c.Context().QueryArgs().Has(k) })
	t := benchmarks.TargetRow{Index: i}
	for _, r := range rows {
		if r.Index == i {
			t = r
		}
	}
	if c.Query("add") != "" {
		return render(c, fiber.StatusOK, templ.Join(benchmarks.TargetFields(t, ch, nil), benchmarks.AddTargetButton(i+1, true)))
	}
	return render(c, fiber.StatusOK, benchmarks.TargetFields(t, ch, nil))
}

// showLoadPresetFragment renders the load fields filled by a preset.
func (s *server) showLoadPresetFragment(c *fiber.Ctx) error {
	f := benchmarks.Form{LoadKind: jobs.LoadSequential}
	if !f.ApplyPreset(c.Query("preset")) {
		names := make([]string, len(benchmarks.Presets))
		for i, p := range benchmarks.Presets {
			names[i] = p.Key
		}
		errs := bench.Errors{{Path: "load.profile", Message: i18n.T(c.UserContext(), "benchpage.no_such_preset", "Presets", strings.Join(names, ", "))}}
		return render(c, fiber.StatusUnprocessableEntity, benchmarks.LoadFields(f, errs))
	}
	return render(c, fiber.StatusOK, benchmarks.LoadFields(f, nil))
}

// showScorerFieldsFragment renders the scorer picker with the options
// field of the scorer picked (scorer=…), keeping a pattern typed so far.
func (s *server) showScorerFieldsFragment(c *fiber.Ctx) error {
	f := benchmarks.Form{Scorer: valid.Field(c.Query("scorer"))}
	if !slices.Contains(bench.Scorers, f.Scorer) {
		errs := bench.Errors{{Path: "scorer", Message: i18n.T(c.UserContext(), "benchpage.scorer_choice", "Scorers", strings.Join(bench.Scorers[1:], ", "))}}
		f.Scorer = ""
		return render(c, fiber.StatusUnprocessableEntity, benchmarks.ScorerFields(f, errs))
	}
	if p := c.Query("scorer_pattern"); len(p) <= score.MaxPatternBytes {
		f.ScorerPattern = strings.Clone(p)
	}
	return render(c, fiber.StatusOK, benchmarks.ScorerFields(f, nil))
}

// estimateRuns is what a preview expects: requests over all runs and a
// range for how long one run takes under the load profile
// (bench.EstimateRun); its basis is said in l's language.
func estimateRuns(l *i18n.Localizer, m bench.Manifest, runs []bench.PlannedRun) benchmarks.Estimate {
	if len(runs) == 0 {
		return benchmarks.Estimate{}
	}
	n := runs[0].Items
	e := benchmarks.Estimate{PerRun: n, Requests: n * len(runs)}
	e.Low, e.High = bench.EstimateRun(m, n)
	tokens := max(m.Sampling.MaxTokens, 1)
	e.Basis = l.T("benchpage.estimate_basis", "Fast", bench.FastToken.String(), "Slow", bench.SlowToken.String(), "Tokens", l.Int(int64(tokens)))
	if d := time.Duration(m.Load.MaxDuration); d > 0 {
		e.Basis += " " + l.T("benchpage.estimate_capped", "D", d.String())
	}
	return e
}
