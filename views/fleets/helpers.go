package fleets

import "fmt"

func orManifest(path string) string {
	if path == "" {
		return "manifest"
	}
	return path
}

func orUncategorised(c string) string {
	if c == "" {
		return "(no category)"
	}
	return c
}

func percent(x float64) string { return fmt.Sprintf("%.1f %%", x*100) }

// figure is an unmeasured figure as a dash, never as zero.
func figure(format string, v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf(format, *v)
}

func usd(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("$%.4f", *v)
}

func orNone(repo string) string {
	if repo == "" {
		return "(none)"
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
