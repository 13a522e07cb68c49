package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// JudgeRequest asks for a judging: RunA graded alone, or against RunB
// (pairwise, both orders).
type JudgeRequest struct {
	Options JudgeOptions
	RunA    int64
	RunB    int64
	// Origin is manifest when a benchmark's judge scorer asks, else user.
	Origin string
}

// JudgeStarted is a judging just queued: the judge's run and benchmark.
type JudgeStarted struct {
	JudgeRunID      int64  `json:"judge_run_id"`
	BenchmarkID     int64  `json:"judge_benchmark_id"`
	Mode            string `json:"mode"`
	Rubric          string `json:"rubric"`
	Items           int    `json:"items"`
	Prompts         int    `json:"prompts"`
	WaitingForAgent bool   `json:"waiting_for_agent"`
}

// checkJudgeTarget checks that the judge's model is registered and
// active and its hardware profile known.
func (p *Service) checkJudgeTarget(ctx context.Context, path string, o JudgeOptions) (Errors, error) {
	var errs Errors
	model, err := p.Store.ModelByName(ctx, o.Model)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && model.RetiredAt != nil):
		errs = append(errs, valid.E(path+".model", "manifest.no_model", "Model", strconv.Quote(o.Model)))
	case err != nil:
		return nil, err
	}
	if _, err := p.Store.HardwareProfileBySlug(ctx, o.Hardware); errors.Is(err, store.ErrNotFound) {
		errs = append(errs, valid.E(path+".hardware", "manifest.no_hardware", "Hardware", strconv.Quote(o.Hardware)))
	} else if err != nil {
		return nil, err
	}
	return errs, nil
}

// judgeRef is what a judge prompt's reference holds: the judged item and
// the order it was asked in. Agents never read references.
type judgeRef struct {
	Idx   int    `json:"idx"`
	Order string `json:"ord"`
}

// StartJudge builds the judge's prompts from the judged run(s) as an
// ordinary (hidden) dataset of chat items and queues an ordinary run of
// the judge model on it, in a benchmark that belongs to the judged run:
// agents lease and measure it like any run. When it finishes, its score
// job reads the verdicts (FinishJudgeRun).
func (p *Service) StartJudge(ctx context.Context, v store.Viewer, req JudgeRequest) (JudgeStarted, error) {
	j := judging{req: req, o: req.Options, mode: judge.Single}
	if req.RunB != 0 {
		j.mode = judge.Pairwise
	}
	var err error
	if j.judged, err = p.checkJudgeRequest(ctx, v, req, j.mode); err != nil {
		return JudgeStarted{}, err
	}
	if j.model, err = p.Store.ModelByName(ctx, j.o.Model); err != nil {
		return JudgeStarted{}, err
	}
	if err := p.writeJudgePrompts(ctx, &j); err != nil {
		return JudgeStarted{}, err
	}
	n, err := p.Store.CountServingAgents(ctx, j.o.Hardware, j.o.Runtime, jobs.ProtocolVersion, p.StaleAfter)
	if err != nil {
		return JudgeStarted{}, err
	}
	j.waiting = n == 0
	j.manifest = judgeManifest(j)
	out := JudgeStarted{Mode: j.mode, Rubric: j.rubric, Items: j.sent, Prompts: len(j.items), WaitingForAgent: j.waiting}
	err = p.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		var err error
		out.JudgeRunID, out.BenchmarkID, err = p.queueJudging(ctx, tx, q, j)
		return err
	})
	return out, err
}

// judging is a judging on its way to the queue: the request, the judged
// run, the judge's model, its prompts and the manifest of its benchmark.
type judging struct {
	req    JudgeRequest
	o      JudgeOptions
	mode   string
	judged store.JudgedRun
	model  store.Model
	// rubric is the rubric's name, template its prompt and lo–hi its
	// scale.
	rubric   string
	template string
	lo, hi   int
	items    []store.DatasetItem
	answers  []store.SimAnswer
	sent     int
	waiting  bool
	manifest Manifest
}

// checkJudgeRequest checks the options, the judged run(s) and the judge's
// model and hardware, and returns the run judged (RunA).
func (p *Service) checkJudgeRequest(ctx context.Context, v store.Viewer, req JudgeRequest, mode string) (store.JudgedRun, error) {
	if errs := req.Options.Validate("judge", mode); len(errs) > 0 {
		return store.JudgedRun{}, errs
	}
	if req.RunB == req.RunA {
		return store.JudgedRun{}, Errors{valid.E("against", "manifest.judge_self")}
	}
	a, err := p.judgedRun(ctx, v, req.RunA, "run")
	if err != nil {
		return a, err
	}
	if mode == judge.Pairwise {
		b, err := p.judgedRun(ctx, v, req.RunB, "against")
		if err != nil {
			return a, err
		}
		if b.DatasetID != a.DatasetID {
			return a, Errors{valid.E("against", "manifest.judge_other_dataset", "B", b.ID, "A", a.ID)}
		}
	}
	errs, err := p.checkJudgeTarget(ctx, "judge", req.Options)
	if err != nil {
		return a, err
	}
	if len(errs) > 0 {
		return a, errs
	}
	return a, nil
}

// writeJudgePrompts chooses the rubric and writes the judge's prompts
// from the judged answers into j.
func (p *Service) writeJudgePrompts(ctx context.Context, j *judging) error {
	srcs, err := p.Store.JudgeSources(ctx, j.req.RunA, j.req.RunB)
	if err != nil {
		return err
	}
	haveRefs := slices.ContainsFunc(srcs, func(s store.JudgeSource) bool { return len(score.References(s.Reference)) > 0 })
	j.rubric = j.o.RubricName(j.mode, haveRefs)
	var criteria string
	j.template = j.o.Template
	if r, ok := judge.RubricByName(j.rubric); ok {
		j.template, criteria = r.Template, r.Criteria
	}
	if !haveRefs && slices.Contains(judge.Placeholders(j.template), judge.PReference) {
		return Errors{valid.E("judge.rubric", "manifest.rubric_needs_reference", "Rubric", j.rubric)}
	}
	j.lo, j.hi = j.o.Bounds()
	system := judge.SystemPrompt(j.mode, criteria, j.lo, j.hi)
	var truths []simTruth
	if j.o.Runtime == "sim" {
		if truths, err = p.simTruths(ctx, j.req, srcs); err != nil {
			return err
		}
	}
	j.items, j.answers, j.sent = judgePrompts(j.mode, srcs, truths, system, j.template, j.lo, j.hi)
	if len(j.items) == 0 {
		return Errors{valid.E("run", map[bool]string{true: "manifest.judge_nothing_both", false: "manifest.judge_nothing"}[j.mode == judge.Pairwise])}
	}
	return nil
}

// judgeManifest is the manifest of the judge's benchmark: the judge's
// model at temperature 0 on its prompts (the dataset is set when stored).
func judgeManifest(j judging) Manifest {
	maxTokens := j.o.MaxTokens
	if maxTokens == 0 {
		maxTokens = defaultJudgeMaxTokens
	}
	conc := j.o.Concurrency
	if conc == 0 {
		conc = defaultJudgeConcurrency
	}
	zero := 0.0
	name := fmt.Sprintf("Judge of run %d (%s)", j.judged.ID, j.rubric)
	if j.mode == judge.Pairwise {
		name = fmt.Sprintf("Judge of run %d against run %d (%s)", j.req.RunA, j.req.RunB, j.rubric)
	}
	return Manifest{Name: name, Dataset: DatasetRef{}, Targets: []Target{{Model: j.o.Model, Runtime: j.o.Runtime, Hardware: j.o.Hardware}},
		Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: conc}, Sampling: jobs.Sampling{Temperature: &zero, MaxTokens: maxTokens}}
}

// queueJudging stores the judge's prompts as a hidden dataset, its
// benchmark, run and judge run, queues the run and tells the judged run's
// story; it returns the judge's run and benchmark.
func (p *Service) queueJudging(ctx context.Context, tx pgx.Tx, q *store.Queries, j judging) (runID, bid int64, err error) {
	m := j.manifest
	if m.Dataset.ID, err = storeJudgePrompts(ctx, q, j.judged.OwnerID, m.Name, j.items); err != nil {
		return 0, 0, err
	}
	snapshot, err := json.Marshal(m)
	if err != nil {
		return 0, 0, err
	}
	if bid, err = q.CreateJudgeBenchmark(ctx, j.judged.OwnerID, m.Name, m.Dataset.ID, j.judged.ID, snapshot); err != nil {
		return 0, 0, err
	}
	if runID, err = q.CreateRun(ctx, store.NewRun{BenchmarkID: bid, ModelID: j.model.ID, Runtime: j.o.Runtime,
		HardwareProfile: j.o.Hardware, WaitingForAgent: j.waiting, Total: len(j.items)}); err != nil {
		return 0, 0, err
	}
	var runB *int64
	if j.mode == judge.Pairwise {
		runB = &j.req.RunB
	}
	origin := j.req.Origin
	if origin == "" {
		origin = "user"
	}
	if err := q.CreateJudgeRun(ctx, store.NewJudgeRun{RunID: runID, Mode: j.mode, RunA: j.req.RunA, RunB: runB, Rubric: j.rubric,
		Template: j.template, ScaleMin: j.lo, ScaleMax: j.hi, Origin: origin}); err != nil {
		return 0, 0, err
	}
	res, err := p.River.InsertTx(ctx, tx, jobs.RunArgs{ProtocolVersion: jobs.ProtocolVersion, RunID: runID, BenchmarkID: bid,
		DatasetID: m.Dataset.ID, Model: j.o.Model, AdapterOf: adapterBase(j.model), Runtime: j.o.Runtime, HardwareProfile: j.o.Hardware,
		Load: m.Load, Sampling: m.Sampling}, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("queue judge run %d: %w", runID, err)
	}
	if err := q.SetRunJob(ctx, runID, res.Job.ID); err != nil {
		return 0, 0, err
	}
	if j.answers != nil {
		if _, err := q.CopySimAnswers(ctx, runID, slices.Values(j.answers)); err != nil {
			return 0, 0, fmt.Errorf("simulated verdicts of judge run %d: %w", runID, err)
		}
	}
	msg := fmt.Sprintf("judged by %s on %s (%s), rubric %s: judge run %d", j.o.Model, j.o.Runtime, j.o.Hardware, j.rubric, runID)
	return runID, bid, q.AddRunEvent(ctx, j.req.RunA, nil, "judging", msg)
}

// storeJudgePrompts stores a judge's prompts as a private dataset hidden
// from lists, and returns its id.
func storeJudgePrompts(ctx context.Context, q *store.Queries, ownerID int64, name string, items []store.DatasetItem) (int64, error) {
	dsID, err := q.WriteDataset(ctx, store.NewDataset{OwnerID: ownerID, Name: name, Format: "judge", Visibility: store.VisibilityPrivate},
		store.ItemsFrom(items), func(*store.Queries, int64) (store.DatasetTotals, error) {
			return store.DatasetTotals{Name: name, Visibility: store.VisibilityPrivate, Format: "judge", TaskKind: "judge"}, nil
		})
	if err != nil {
		return 0, err
	}
	return dsID, q.HideDataset(ctx, dsID)
}

// judgedRun loads a finished run the viewer may see, for judging.
func (p *Service) judgedRun(ctx context.Context, v store.Viewer, id int64, path string) (store.JudgedRun, error) {
	r, err := p.Store.JudgedRunByID(ctx, v, id)
	if errors.Is(err, store.ErrNotFound) {
		return r, Errors{valid.E(path, "manifest.no_run", "ID", id)}
	}
	if err != nil {
		return r, err
	}
	switch {
	case r.IsJudge:
		return r, Errors{valid.E(path, "manifest.run_is_judge", "ID", id)}
	case r.State == "queued" || r.State == "running":
		return r, Errors{valid.E(path, "manifest.run_unfinished", "ID", id, "State", r.State)}
	}
	return r, nil
}

// judgePrompts renders the judge's prompts: one per answered item for a
// single grading (failed requests are not sent: they score 0 as with
// every scorer), two per item both runs answered for a pair (each order).
// With truths (a judge on the simulated runtime, one per source) it also
// writes what the simulated judge answers.
func judgePrompts(mode string, srcs []store.JudgeSource, truths []simTruth, system, tmpl string, lo, hi int) ([]store.DatasetItem, []store.SimAnswer, int) {
	var items []store.DatasetItem
	var answers []store.SimAnswer
	sent := 0
	add := func(src store.JudgeSource, order string, values map[string]string, simText func() string) {
		ref, _ := json.Marshal(judgeRef{Idx: src.Idx, Order: order})
		body, err := judge.Request(system, judge.Render(tmpl, values))
		if err != nil {
			return
		}
		idx := len(items)
		items = append(items, store.DatasetItem{Idx: idx, CustomID: fmt.Sprintf("%d/%s", src.Idx, order), Request: body, Reference: ref})
		if truths != nil {
			answers = append(answers, store.SimAnswer{Idx: idx, Answer: simText()})
		}
	}
	for k, src := range srcs {
		var t simTruth
		if truths != nil {
			t = truths[k]
		}
		q := judge.Clip(judge.Question(src.Request))
		refText := judge.Reference(src.Reference)
		ref := judge.Clip(refText)
		if ref == "" {
			ref = "(no reference given)"
		}
		a := judge.Clip(src.OutputA)
		if mode == judge.Single {
			if src.StatusA != jobs.StatusOK {
				continue
			}
			sent++
			add(src, "single", map[string]string{judge.PQuestion: q, judge.PAnswer: a, judge.PReference: ref},
				func() string { return judge.SimRating(src.OutputA, refText, t.a, lo, hi) })
			continue
		}
		if src.StatusA != jobs.StatusOK && src.StatusB != jobs.StatusOK {
			continue
		}
		b := judge.Clip(src.OutputB)
		a, b = orFailed(a, src.StatusA), orFailed(b, src.StatusB)
		sent++
		add(src, "ab", map[string]string{judge.PQuestion: q, judge.PAnswerA: a, judge.PAnswerB: b, judge.PReference: ref},
			func() string { return judge.SimPair(a, b, refText, t.a, t.b) })
		add(src, "ba", map[string]string{judge.PQuestion: q, judge.PAnswerA: b, judge.PAnswerB: a, judge.PReference: ref},
			func() string { return judge.SimPair(b, a, refText, t.b, t.a) })
	}
	return items, answers, sent
}

// simTruth is the simulated model's right (true) or wrong (false) on one
// item of the judged run (a) and of the run it is judged against (b); nil
// where the answer did not come from the simulated runtime.
type simTruth struct{ a, b *bool }

// simTruths tells, for a judging on the simulated runtime, whether each
// judged answer is the simulated model's right answer: the answer the
// server writes for an item drawn right (SimAnswerWith with right set,
// under the scorer the run's answers were written for), delivered whole.
// A wrong draw, a cut answer or a failed request is wrong. So the
// simulated judge follows the simulated model, and agrees with the scorer
// (docs/simulated-runtime.md#the-simulated-judge).
func (p *Service) simTruths(ctx context.Context, req JudgeRequest, srcs []store.JudgeSource) ([]simTruth, error) {
	rightA, err := p.simRightAnswers(ctx, req.RunA)
	if err != nil {
		return nil, err
	}
	rightB := rightA
	if req.RunB != 0 {
		if rightB, err = p.simRightAnswers(ctx, req.RunB); err != nil {
			return nil, err
		}
	}
	truth := func(simmed bool, status, output string, ref json.RawMessage, rightAnswer func(json.RawMessage) string) *bool {
		if !simmed {
			return nil
		}
		right := status == jobs.StatusOK && strings.TrimSpace(output) == strings.TrimSpace(rightAnswer(ref))
		return &right
	}
	out := make([]simTruth, len(srcs))
	for k, s := range srcs {
		out[k].a = truth(s.SimA, s.StatusA, s.OutputA, s.Reference, rightA)
		if req.RunB != 0 {
			out[k].b = truth(s.SimB, s.StatusB, s.OutputB, s.Reference, rightB)
		}
	}
	return out, nil
}

// simRightAnswers gives the answer the simulated runtime streams for an
// item of run drawn right: under the scorer the benchmark service wrote
// the run's answers for (writeSimAnswers: the benchmark's scorer with its
// options, else the dataset's default). Right answers involve no draw, so they
// are written again exactly.
func (p *Service) simRightAnswers(ctx context.Context, run int64) (func(json.RawMessage) string, error) {
	scorer, dataset, err := p.Store.RunScorer(ctx, run)
	if err != nil {
		return nil, err
	}
	var opts score.Options
	if scorer == "" {
		scorer = dataset
	} else {
		raw, err := p.Store.RunScorerOptions(ctx, run)
		if err != nil {
			return nil, err
		}
		if opts, err = score.ParseOptions(raw); err != nil {
			return nil, fmt.Errorf("run %d: %w", run, err)
		}
	}
	return func(ref json.RawMessage) string {
		out, _ := SimAnswerWith(scorer, opts, ref, true, rand.New(rand.NewPCG(0, 0)))
		return out
	}, nil
}

// orFailed stands in for the answer of a failed request in a pair: the
// other run's answer is judged against no answer at all.
func orFailed(answer, status string) string {
	if status != jobs.StatusOK {
		return "(no answer: the request failed)"
	}
	return answer
}

// JudgeFromManifest starts the judging a benchmark's judge scorer asks
// for, once per run however often its score job runs, and says whether
// a judging of the run is under way: its end concludes the run
// (FinishJudgeRun), so a run that is not judged is concluded now.
func (p *Service) JudgeFromManifest(ctx context.Context, runID int64) (bool, error) {
	bid, err := p.Store.BenchmarkOfRun(ctx, runID)
	if err != nil {
		return false, err
	}
	raw, _, err := p.Store.BenchmarkManifest(ctx, bid)
	if err != nil {
		return false, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return false, fmt.Errorf("benchmark %d manifest: %w", bid, err)
	}
	if m.ScorerOptions == nil || m.ScorerOptions.Judge == nil {
		return false, p.Store.AddRunEvent(ctx, runID, nil, "judging", "not judged: the benchmark names the judge scorer without a judge")
	}
	owner, err := p.Store.BenchmarkOwnerOfRun(ctx, runID)
	if err != nil {
		return false, err
	}
	_, err = p.StartJudge(ctx, store.Viewer{UserID: owner}, JudgeRequest{Options: *m.ScorerOptions.Judge, RunA: runID, Origin: "manifest"})
	var errs Errors
	switch {
	case errors.Is(err, store.ErrJudgeExists):
		// A retried score job: the judging it started goes on.
		return true, nil
	case errors.As(err, &errs):
		// Nothing a retry would change (a retired judge model, no answer
		// to judge): said on the run instead.
		return false, p.Store.AddRunEvent(ctx, runID, nil, "judging", "not judged: "+errs.Error())
	}
	return err == nil, err
}

// FinishJudgeRun reads a finished judge run's answers into verdicts; for
// a single grading the judged run's item scores become the normalised
// ratings and its quality their mean with the bootstrap interval. It
// returns the run judged (run_a, whose conclusions are drawn next), 0
// when runID is not a judge's run.
func (p *Service) FinishJudgeRun(ctx context.Context, runID int64) (int64, error) {
	jr, err := p.Store.JudgeRunByID(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	items, err := p.Store.JudgeItems(ctx, runID)
	if err != nil {
		return 0, err
	}
	o := store.JudgingOutcome{JudgeRunID: runID, State: "judged"}
	if jr.Judge.State == "failed" || jr.Judge.State == "cancelled" {
		o.State, o.Error = "failed", strings.TrimSpace("the judge run "+jr.Judge.State+": "+jr.Judge.Error)
	}
	if jr.Mode == judge.Single {
		err = p.finishSingle(ctx, jr, items, &o)
	} else {
		finishPair(jr, items, &o)
	}
	if err != nil {
		return 0, err
	}
	return jr.RunA, p.Store.SaveJudging(ctx, o)
}

func (p *Service) finishSingle(ctx context.Context, jr store.JudgeRun, items []store.JudgeItem, o *store.JudgingOutcome) error {
	byIdx := map[int]store.Judgment{}
	for _, it := range items {
		j := store.Judgment{JudgedRunID: jr.RunA, Idx: it.Idx, Order: "single", Raw: judge.ClipRaw(it.Output)}
		switch it.Status {
		case "":
			j.Verdict, j.Rationale = judge.NoAnswer, "the judge run ended before this item was judged"
		case jobs.StatusError:
			j.Verdict, j.Rationale = judge.RequestFailed, "the request to the judge failed"
		default:
			r := judge.ParseRating(it.Output, jr.ScaleMin, jr.ScaleMax)
			j.Rationale = r.Rationale
			if r.OK {
				j.Verdict, j.Score, j.Rating = judge.Rated, &r.Score, &r.Rating
			} else {
				j.Verdict = judge.Unparseable
				j.Rationale = strings.TrimSpace("Unparseable: " + r.Why + ".\n\n" + r.Rationale)
			}
		}
		byIdx[it.Idx] = j
	}
	srcs, err := p.Store.JudgeSources(ctx, jr.RunA, 0)
	if err != nil {
		return err
	}
	o.JudgedRunID = jr.RunA
	var all []float64
	for _, s := range srcs {
		j, ok := byIdx[s.Idx]
		if !ok {
			if s.StatusA == jobs.StatusOK {
				continue // answered after the judging started: not judged
			}
			zero := 0.0
			j = store.Judgment{JudgedRunID: jr.RunA, Idx: s.Idx, Order: "single", Score: &zero, Verdict: judge.RequestFailed,
				Rationale: "the run's own request failed: it scores 0, as with every scorer"}
		}
		o.Judgments = append(o.Judgments, j)
		o.Idx = append(o.Idx, int32(s.Idx))
		o.Scores = append(o.Scores, j.Score)
		if j.Score != nil {
			all = append(all, *j.Score)
		}
	}
	q := store.RunQuality{Scorer: ScorerJudge, Scored: len(all), Judge: judgeIdentity(jr)}
	if len(all) > 0 {
		mean, lo, hi := score.MeanCI(all, uint64(jr.RunA))
		q.Mean, q.Low, q.High = &mean, &lo, &hi
	}
	o.Quality = &q
	return nil
}

func finishPair(jr store.JudgeRun, items []store.JudgeItem, o *store.JudgingOutcome) {
	type pair struct{ ab, ba judge.Pair }
	var order []int
	pairs := map[int]*pair{}
	for _, it := range items {
		pr := pairs[it.Idx]
		if pr == nil {
			pr = &pair{}
			pairs[it.Idx] = pr
			order = append(order, it.Idx)
		}
		j := store.Judgment{JudgedRunID: jr.RunA, Idx: it.Idx, Order: it.Order, Raw: judge.ClipRaw(it.Output)}
		var got judge.Pair
		switch it.Status {
		case "":
			j.Verdict, j.Rationale = judge.NoAnswer, "the judge run ended before this order was judged"
		case jobs.StatusError:
			j.Verdict, j.Rationale = judge.RequestFailed, "the request to the judge failed"
		default:
			got = judge.ParsePair(it.Output)
			j.Rationale = got.Rationale
			if it.Order == "ba" {
				got.Verdict = judge.Swap(got.Verdict)
			}
			if got.OK {
				j.Verdict = got.Verdict
			} else {
				j.Verdict = judge.Unparseable
				j.Rationale = strings.TrimSpace("Unparseable: " + got.Why + ".\n\n" + got.Rationale)
			}
		}
		if it.Order == "ba" {
			pr.ba = got
		} else {
			pr.ab = got
		}
		o.Judgments = append(o.Judgments, j)
	}
	for _, idx := range order {
		pr := pairs[idx]
		out := judge.Reconcile(pr.ab, pr.ba)
		f := store.Judgment{JudgedRunID: jr.RunA, Idx: idx, Order: "final", Verdict: out.Verdict, Rationale: out.Why}
		switch {
		case out.Unparsed:
			f.Verdict = judge.Unparseable
			o.Unparsed++
		case out.Verdict == judge.A:
			o.Wins++
		case out.Verdict == judge.B:
			o.Losses++
		default:
			o.Ties++
		}
		if out.Inconsistent {
			o.Inconsistent++
		}
		o.Judgments = append(o.Judgments, f)
	}
}

// judgeIdentity is what tells one judge's verdicts from another's: a
// quality is comparable only under the same judge model, rubric,
// template, scale and mode.
func judgeIdentity(jr store.JudgeRun) *store.JudgeIdentity {
	return &store.JudgeIdentity{Model: jr.Judge.ModelName, Mode: jr.Mode, Rubric: jr.Rubric, Template: jr.Template,
		ScaleMin: jr.ScaleMin, ScaleMax: jr.ScaleMax}
}
