package fleets

import (
	"context"
	"time"

	"github.com/ruckus/ruckus/app/fleet"
	"github.com/ruckus/ruckus/app/i18n"
)

func orManifest(path string) string {
	if path == "" {
		return "manifest"
	}
	return path
}

// orUncategorised is a category as its row's test id names it.
func orUncategorised(c string) string {
	if c == "" {
		return "(no category)"
	}
	return c
}

// categoryName is a category as the reader sees it.
func categoryName(ctx context.Context, c string) string {
	if c == "" {
		return i18n.T(ctx, "fleets.no_category")
	}
	return c
}

func percent(ctx context.Context, x float64) string { return i18n.Num(ctx, x*100, 1) + " %" }

// figure is an unmeasured figure as a dash, never as zero.
func figure(ctx context.Context, v *float64, decimals int) string {
	if v == nil {
		return "–"
	}
	return i18n.Num(ctx, *v, decimals)
}

func usd(ctx context.Context, v *float64) string {
	if v == nil {
		return "–"
	}
	return "$" + i18n.Num(ctx, *v, 4)
}

// orNone is a repository as its row's test id names it.
func orNone(repo string) string {
	if repo == "" {
		return "(none)"
	}
	return repo
}

// repositoryName is a repository as the reader sees it.
func repositoryName(ctx context.Context, repo string) string {
	if repo == "" {
		return i18n.T(ctx, "fleets.no_repository")
	}
	return repo
}

// scenarioKey is a scenario as a person reads it: repository/name.
func scenarioKey(repo, scenario string) string {
	if repo == "" {
		return scenario
	}
	return repo + "/" + scenario
}

// submitted is when a fleet was submitted, to the second (a fleet's name
// is unique within one), in the reader's date format, UTC.
func submitted(ctx context.Context, t time.Time) string {
	return i18n.DateTime(ctx, t) + t.UTC().Format(":05")
}

// summaryRow is one figure of a fleet's summary table.
type summaryRow struct{ key, label, value string }

// summaryRows are the fleet summary's figures (fleet.Summary.Metrics, the
// dashboard's and the CSV's, gives the keys and order) with the labels
// and numbers in the reader's language.
func summaryRows(ctx context.Context, s fleet.Summary) []summaryRow {
	n := func(v int) string { return i18n.Int(ctx, int64(v)) }
	f := func(v *float64, decimals int) string { return figure(ctx, v, decimals) }
	var seconds *float64
	if s.TotalDurationMs != nil {
		x := *s.TotalDurationMs / 1000
		seconds = &x
	}
	perRepo := s.AvgTestsPerRepository
	byKey := map[string][2]string{
		"total_repositories":       {i18n.T(ctx, "fleets.sum_repositories"), n(s.TotalRepositories)},
		"total_tests":              {i18n.T(ctx, "fleets.sum_tests"), n(s.TotalTests)},
		"total_succeeded":          {i18n.T(ctx, "fleets.sum_succeeded"), n(s.TotalSucceeded)},
		"total_failed":             {i18n.T(ctx, "fleets.sum_failed"), n(s.TotalFailed)},
		"total_timeout":            {i18n.T(ctx, "fleets.sum_timeout"), n(s.TotalTimeout)},
		"total_skipped":            {i18n.T(ctx, "fleets.sum_skipped"), n(s.TotalSkipped)},
		"total_pending":            {i18n.T(ctx, "fleets.sum_pending"), n(s.TotalPending)},
		"success_rate":             {i18n.T(ctx, "fleets.sum_success_rate"), percent(ctx, s.SuccessRate)},
		"avg_duration_ms":          {i18n.T(ctx, "fleets.sum_avg_duration"), f(s.AvgDurationMs, 1)},
		"p50_duration_ms":          {i18n.T(ctx, "fleets.sum_p50_duration"), f(s.P50DurationMs, 1)},
		"p95_duration_ms":          {i18n.T(ctx, "fleets.sum_p95_duration"), f(s.P95DurationMs, 1)},
		"p99_duration_ms":          {i18n.T(ctx, "fleets.sum_p99_duration"), f(s.P99DurationMs, 1)},
		"min_duration_ms":          {i18n.T(ctx, "fleets.sum_min_duration"), f(s.MinDurationMs, 1)},
		"max_duration_ms":          {i18n.T(ctx, "fleets.sum_max_duration"), f(s.MaxDurationMs, 1)},
		"total_tokens":             {i18n.T(ctx, "fleets.sum_tokens"), i18n.Int(ctx, s.TotalTokens)},
		"avg_tokens_per_request":   {i18n.T(ctx, "fleets.sum_tokens_per_request"), f(s.AvgTokensPerRequest, 1)},
		"total_cost":               {i18n.T(ctx, "fleets.sum_total_cost"), usd(ctx, s.TotalCost)},
		"avg_cost_per_repository":  {i18n.T(ctx, "fleets.sum_cost_per_repository"), usd(ctx, s.AvgCostPerRepository)},
		"avg_tests_per_repository": {i18n.T(ctx, "fleets.sum_tests_per_repository"), f(&perRepo, 1)},
		"total_duration_ms":        {i18n.T(ctx, "fleets.sum_execution_time"), f(seconds, 1)},
	}
	ms := s.Metrics()
	rows := make([]summaryRow, 0, len(ms))
	for _, m := range ms {
		row := summaryRow{key: m.Key, label: m.Label, value: m.Value}
		if lv, ok := byKey[m.Key]; ok {
			row.label, row.value = lv[0], lv[1]
		}
		rows = append(rows, row)
	}
	return rows
}
