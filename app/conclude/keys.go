package conclude

// The catalogue keys of sentences whose key depends on a criterion or a
// case: each written out, so a sentence's code is its key and the
// catalogue's test sees every key used (app/i18n/catalogue_test.go).

// titleKey is the recommendation's title of criterion c.
func titleKey(c Criterion) string {
	switch c {
	case Quality:
		return "recommend.said.title_quality"
	case Speed:
		return "recommend.said.title_speed"
	case Cost:
		return "recommend.said.title_cost"
	case Goodput:
		return "recommend.said.title_goodput"
	}
	return ""
}

// bestKey is "best <criterion>" of the recommendation.
func bestKey(c Criterion) string {
	switch c {
	case Quality:
		return "recommend.said.best_quality"
	case Speed:
		return "recommend.said.best_speed"
	case Cost:
		return "recommend.said.best_cost"
	case Goodput:
		return "recommend.said.best_goodput"
	}
	return ""
}

// lowerKey is the recommendation's "lower <criterion>".
func lowerKey(c Criterion) string {
	switch c {
	case Quality:
		return "recommend.said.lower_quality"
	case Speed:
		return "recommend.said.lower_speed"
	case Cost:
		return "recommend.said.lower_cost"
	case Goodput:
		return "recommend.said.lower_goodput"
	}
	return ""
}

// leftOutKey is the recommendation's note of runs left out of criterion c.
func leftOutKey(c Criterion) string {
	switch c {
	case Quality:
		return "recommend.said.note_left_out_quality"
	case Speed:
		return "recommend.said.note_left_out_speed"
	case Cost:
		return "recommend.said.note_left_out_cost"
	case Goodput:
		return "recommend.said.note_left_out_goodput"
	}
	return ""
}

// testKey is the named paired test's message ("" for another test).
func testKey(test string) string {
	switch test {
	case "mcnemar-exact":
		return "compare.said.test_mcnemar_exact"
	case "mcnemar-chi2-uc":
		return "compare.said.test_mcnemar_chi2_uc"
	case "mcnemar-chi2":
		return "compare.said.test_mcnemar_chi2"
	case "paired-bootstrap":
		return "compare.said.test_paired_bootstrap"
	case "paired-permutation":
		return "compare.said.test_paired_permutation"
	}
	return ""
}

// phraseKey is the phrase of a margin on criterion c, how it went ("equal", "better", "ns_worse", …), "_than" when the other target is named.
func phraseKey(c Criterion, how string, named bool) string {
	switch phraseCase(c, how, named) {
	case "quality_equal":
		return "recommend.said.phrase_quality_equal"
	case "quality_equal_than":
		return "recommend.said.phrase_quality_equal_than"
	case "quality_better":
		return "recommend.said.phrase_quality_better"
	case "quality_better_than":
		return "recommend.said.phrase_quality_better_than"
	case "quality_worse":
		return "recommend.said.phrase_quality_worse"
	case "quality_worse_than":
		return "recommend.said.phrase_quality_worse_than"
	case "quality_ns_better":
		return "recommend.said.phrase_quality_ns_better"
	case "quality_ns_better_than":
		return "recommend.said.phrase_quality_ns_better_than"
	case "quality_ns_worse":
		return "recommend.said.phrase_quality_ns_worse"
	case "quality_ns_worse_than":
		return "recommend.said.phrase_quality_ns_worse_than"
	case "speed_equal":
		return "recommend.said.phrase_speed_equal"
	case "speed_equal_than":
		return "recommend.said.phrase_speed_equal_than"
	case "speed_better":
		return "recommend.said.phrase_speed_better"
	case "speed_better_than":
		return "recommend.said.phrase_speed_better_than"
	case "speed_worse":
		return "recommend.said.phrase_speed_worse"
	case "speed_worse_than":
		return "recommend.said.phrase_speed_worse_than"
	case "latency_equal":
		return "recommend.said.phrase_latency_equal"
	case "latency_equal_than":
		return "recommend.said.phrase_latency_equal_than"
	case "latency_better":
		return "recommend.said.phrase_latency_better"
	case "latency_better_than":
		return "recommend.said.phrase_latency_better_than"
	case "latency_worse":
		return "recommend.said.phrase_latency_worse"
	case "latency_worse_than":
		return "recommend.said.phrase_latency_worse_than"
	case "cost_equal":
		return "recommend.said.phrase_cost_equal"
	case "cost_equal_than":
		return "recommend.said.phrase_cost_equal_than"
	case "cost_better":
		return "recommend.said.phrase_cost_better"
	case "cost_better_than":
		return "recommend.said.phrase_cost_better_than"
	case "cost_worse":
		return "recommend.said.phrase_cost_worse"
	case "cost_worse_than":
		return "recommend.said.phrase_cost_worse_than"
	case "goodput_equal":
		return "recommend.said.phrase_goodput_equal"
	case "goodput_equal_than":
		return "recommend.said.phrase_goodput_equal_than"
	case "goodput_better":
		return "recommend.said.phrase_goodput_better"
	case "goodput_better_than":
		return "recommend.said.phrase_goodput_better_than"
	case "goodput_worse":
		return "recommend.said.phrase_goodput_worse"
	case "goodput_worse_than":
		return "recommend.said.phrase_goodput_worse_than"
	}
	return ""
}

func phraseCase(c Criterion, how string, named bool) string {
	k := string(c) + "_" + how
	if named {
		k += "_than"
	}
	return k
}
