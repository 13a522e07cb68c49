package conclude

// ClaimSaid is the margin as the comparison's claim with the baseline
// (docs/concepts.md#the-conclusions-engine): what differs when the runs
// are not comparable, else the difference, the test and whether it is
// significant.
func (m Margin) ClaimSaid() Said {
	name := criterionSaid(m.Criterion)
	// No relative margin against zero: the absolute difference.
	var pct Said
	if m.Relative {
		pct = say("compare.claim_pct", "Pct", signed(m.Pct, 1))
	} else {
		pct = say("compare.claim_delta", "D", Sig{V: m.A - m.B, Digits: 3, Plus: true})
	}
	switch {
	case !m.Measured:
		return say("compare.claim_not_measured", "Name", name)
	case !m.Comparable:
		return say("compare.claim_not_comparable", "Name", name, "Reason", m.ReasonSaid)
	case m.P == nil:
		return say("compare.claim_untested", "Name", name, "Pct", pct, "Basis", m.BasisSaid)
	case m.Tie:
		var detect any = ""
		if m.Detectable != nil {
			detect = say("compare.claim_detectable", "Pct", Pct(*m.Detectable))
		}
		return say("compare.claim_not_significant", "Name", name, "Pct", pct, "Test", m.Test, "P", pval(*m.P), "Detect", detect)
	}
	return say("compare.claim_significant", "Name", name, "Pct", pct, "Test", m.Test, "P", pval(*m.P))
}

// criterionSaid names a criterion in a claim.
func criterionSaid(c Criterion) Said {
	switch c {
	case Quality:
		return say("compare.crit_quality")
	case Speed:
		return say("compare.crit_speed")
	case Latency:
		return say("compare.crit_latency")
	case Cost:
		return say("compare.crit_cost")
	}
	return say("compare.crit_goodput")
}
