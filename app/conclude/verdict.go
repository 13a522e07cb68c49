package conclude

import "strings"

// The verdict's wording (docs/verdict.md#what-the-verdict-says): which
// sentence each part of a line is and with which values. A page words
// them in its reader's language and nothing else (Said.In), so the
// decision of what is said lives here and its wording once in the
// catalogue.

// Verdict is a weighed benchmark's verdict as sentences.
type Verdict struct {
	// Empty says why there is nothing to compare (no run succeeded);
	// then Lines is empty.
	Empty Said
	// Notes are the runs left out, each with its state.
	Notes []Said
	Lines []VerdictLine
}

// VerdictLine is the leader on one criterion, by how much and how sure;
// a zero Said is no sentence.
type VerdictLine struct {
	Criterion Criterion
	Title     Said
	// Missing, when set, says why no compared run has the figure (or why
	// it is not ranked); nothing else is then set.
	Missing Said
	// Winner names the leader and Value is its figure with its unit.
	Winner, Value Said
	// RunnerUp is empty when only the winner has the figure; Margin is
	// the lead over it in per cent and in the figure's unit ("0.6 %
	// faster than a (1000.0 tokens/s), +6.0 tokens/s").
	RunnerUp, Margin Said
	// Tie: the margin is noise or not established; Significance says
	// which, Basis by which test.
	Tie                 bool
	Significance, Basis Said
	// AlsoTied names the others effectively tied with the winner besides
	// the runner-up; Unmeasured those without the figure.
	AlsoTied, Unmeasured Said
	// NotComparable are the runs measured under another scorer identity
	// or load, each "label: not comparable: what differs"; never ranked.
	NotComparable []Said
}

// Verdict is the verdict of the weighed benchmark: its runs left out, and
// a line per criterion that applies (goodput only under an open loop).
func (j Weighed) Verdict() Verdict {
	var v Verdict
	for _, r := range j.Left {
		v.Notes = append(v.Notes, say("vline.left_out", "ID", r.ID, "Model", r.ModelName, "Runtime", r.Runtime,
			"Hardware", r.HardwareProfile, "State", say("state."+r.State)))
	}
	if len(j.Cands) == 0 {
		v.Empty = say("vline.empty")
		return v
	}
	for _, c := range Criteria {
		if l := j.Leads(c); !l.Absent() {
			v.Lines = append(v.Lines, j.line(l))
		}
	}
	return v
}

// line is the verdict's line of lead l.
func (j Weighed) line(l Lead) VerdictLine {
	line := VerdictLine{Criterion: l.Criterion, Title: verdictTitle(l.Criterion)}
	if l.Best == nil {
		line.Missing = j.notMeasured(l.Criterion)
		if len(l.NotComparable) > 0 { // measured, never ranked (a refusal rate): the engine's reason, as the API gives it
			line.Missing = l.NotComparable[0].ReasonSaid
		}
		return line
	}
	line.Unmeasured = namesSaid("vline.names", l.Unmeasured, j.Cands)
	for _, x := range l.NotComparable {
		line.NotComparable = append(line.NotComparable, say("vline.not_comparable_run", "Label", labelSaid(x.Candidate, j.Cands), "Reason", x.ReasonSaid))
	}
	line.Winner = nameSaid(*l.Best, j.Cands)
	line.Value = verdictValue(l.Criterion, *l.Criterion.Value(*l.Best))
	if l.RunnerUp == nil {
		return line
	}
	m := l.Margin
	line.RunnerUp = nameSaid(*l.RunnerUp, j.Cands)
	runnerUp := labelSaid(*l.RunnerUp, j.Cands)
	if m.Better == 0 {
		line.Margin = say("vline.level_with", "RunnerUp", runnerUp, "Value", verdictValue(l.Criterion, m.B))
	} else {
		line.Margin = say("vline.margin", "Lead", leadSaid(m), "RunnerUp", runnerUp, "Value", verdictValue(l.Criterion, m.B), "Diff", diffSaid(m))
	}
	line.Tie, line.Basis, line.Significance = m.Tie, m.BasisSaid, significance(m)
	var also []Candidate
	for _, x := range l.TiedWith {
		if x.RunID != l.RunnerUp.RunID {
			also = append(also, x)
		}
	}
	line.AlsoTied = namesSaid("vline.names", also, j.Cands)
	return line
}

// verdictTitle is the title of a criterion's line.
func verdictTitle(c Criterion) Said {
	switch c {
	case Quality:
		return say("vline.title_quality")
	case Latency:
		return say("vline.title_latency")
	case Speed:
		return say("vline.title_speed")
	case Cost:
		return say("vline.title_cost")
	}
	return say("vline.title_goodput")
}

// notMeasured says why no compared run has the criterion's figure.
func (j Weighed) notMeasured(c Criterion) Said {
	switch c {
	case Quality:
		switch {
		case j.Scoring.Scorer == "":
			return say("vline.no_scorer")
		case j.Pending() && len(j.Scoring.Pending) > 0:
			return say("vline.scoring", "Scorer", j.Scoring.Scorer)
		case len(j.Status.Failed) > 0:
			return say("vline.scoring_failed", "Scorer", j.Scoring.Scorer, "Runs", runList(j.Status.Failed))
		}
		return say("vline.no_reference")
	case Cost:
		return say("vline.no_price", "Profiles", strings.Join(j.Unpriced, ", "))
	}
	return say("vline.no_success")
}

// significance says whether a lead is established: "significant", "not
// established", "not tested", or "equal".
func significance(m Margin) Said {
	switch {
	case m.Tie && m.Better == 0:
		return say("vline.equal")
	case m.P == nil:
		return say("vline.untested")
	case m.Tie:
		return say("vline.tie")
	}
	return say("vline.significant")
}

// nameSaid names a candidate among others as a sentence of its own.
func nameSaid(x Candidate, among []Candidate) Said {
	if s, ok := labelSaid(x, among).(Said); ok {
		return s
	}
	return say("vline.name", "Name", labelSaid(x, among))
}

// namesSaid names candidates one after the other, each pair of
// neighbours joined by the message code ("a, b", "a ≈ b"); no sentence
// for none.
func namesSaid(code string, xs, among []Candidate) Said {
	if len(xs) == 0 {
		return Said{}
	}
	names := nameSaid(xs[0], among)
	for _, x := range xs[1:] {
		names = say(code, "A", names, "B", labelSaid(x, among))
	}
	return names
}

// leadSaid is the winner's relative lead: "0.6 % faster"; against a
// figure of zero, only which way ("faster").
func leadSaid(m Margin) Said {
	if m.Better == 0 {
		return say("vline.level")
	}
	word, pct := "vline.higher", "vline.pct_higher"
	switch m.Criterion {
	case Speed:
		word, pct = "vline.faster", "vline.pct_faster"
	case Latency:
		word, pct = "vline.quicker", "vline.pct_quicker"
	case Cost:
		word, pct = "vline.cheaper", "vline.pct_cheaper"
	}
	if !m.Relative {
		return say(word)
	}
	return say(pct, "Pct", Pct(m.Pct))
}

// verdictValue is a criterion's figure with its unit: "0.850", "123.4
// tokens/s", "812 ms", "$0.120 per 1M output tokens".
func verdictValue(c Criterion, v float64) Said {
	switch c {
	case Quality, Latency:
		return valueSaid(c, v)
	case Speed:
		return say("vline.value_speed", "V", dec(v, 1))
	case Goodput:
		return say("vline.goodput_share", "Share", dec(v*100, 1))
	}
	return say("vline.per_million", "Price", dec(v, 3))
}

// diffSaid is the winner's lead in the figure's unit, signed as the
// figure moves: "+0.030", "+6.0 tokens/s", "−30 ms", "−$0.003 per 1M
// output tokens".
func diffSaid(m Margin) Said {
	d := m.A - m.B
	sign := "vline.plus"
	if d < 0 {
		sign, d = "vline.minus", -d
	}
	if m.Criterion == Goodput {
		return say(sign, "Value", say("vline.goodput_points", "Points", dec(d*100, 1)))
	}
	return say(sign, "Value", verdictValue(m.Criterion, d))
}

// Summary is the verdict in one line for a list: best quality, fastest
// (output tokens/s; goodput in its place under an open loop, as the
// verdict) and cheapest, each with "≈" naming those effectively tied.
func (j Weighed) Summary() Said {
	if j.Pending() {
		return say("vline.sum_pending", "Reason", j.Status.Reason)
	}
	if len(j.Cands) == 0 {
		return say("vline.none_succeeded")
	}
	// Under an open loop speed is the offered load, not the target's: the
	// summary names goodput in its place, as the verdict does.
	summarized := []Criterion{Quality, Speed, Cost}
	goodput := j.Leads(Goodput)
	if !goodput.Absent() {
		summarized[1] = Goodput
	}
	var parts []any
	for i, c := range summarized {
		l := goodput
		if c != Goodput {
			l = j.Leads(c)
		}
		part := say("vline.sum_part", "Title", summaryTitle(c), "What", j.summaryWhat(l))
		parts = append(parts, []string{"Quality", "Speed", "Cost"}[i], part)
	}
	return say("vline.summary", parts...)
}

// summaryTitle is a criterion's name in the summary.
func summaryTitle(c Criterion) Said {
	switch c {
	case Quality:
		return say("vline.title_quality")
	case Speed:
		return say("vline.short_speed")
	case Goodput:
		return say("vline.short_goodput")
	}
	return say("vline.short_cost")
}

// summaryWhat is who leads l in the summary, and by how much.
func (j Weighed) summaryWhat(l Lead) Said {
	switch {
	case l.Best == nil && l.Criterion == Quality && j.Scoring.Scorer != "" && len(j.Scoring.Pending) > 0 && j.Pending():
		return say("vline.sum_scoring")
	case l.Best == nil && l.Criterion == Quality && len(j.Status.Failed) > 0:
		return say("vline.sum_scoring_failed")
	case l.Best == nil && len(l.NotComparable) > 0:
		// Measured and never ranked (a refusal rate): the reason, as the
		// verdict's line and the API give it.
		return l.NotComparable[0].ReasonSaid
	case l.Best == nil:
		return say("vline.sum_not_measured")
	case len(j.Cands) == 1:
		return say("vline.sum_only", "Label", labelSaid(*l.Best, j.Cands))
	case len(l.TiedWith) > 0:
		return say("vline.sum_tie", "Labels", namesSaid("vline.tied_names", append([]Candidate{*l.Best}, l.TiedWith...), j.Cands))
	case l.RunnerUp == nil:
		return nameSaid(*l.Best, j.Cands)
	}
	return say("vline.sum_lead", "Label", labelSaid(*l.Best, j.Cands), "Lead", leadSaid(l.Margin))
}
