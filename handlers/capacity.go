package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/capacity"
	"github.com/ruckus/ruckus/views/compare"
)

type capacityStore interface {
	DatasetRuns(ctx context.Context, v store.Viewer, datasetID int64, limit int, imported bool) ([]store.RunFigures, error)
	summary.Source
	summary.StepSource
	HardwareProfileBySlug(ctx context.Context, slug string) (store.HardwareProfile, error)
	conclude.PairSource
	conclude.DriftSource
}

// capacityRuns is how many of a dataset's runs the planner weighs at most
// (the newest).
const capacityRuns = 50

// importedMode is the mode of a run whose results were imported from
// elsewhere (store.FinishImport writes it).
const importedMode = "imported"

// capacityRequest is the planner's question, from the API's JSON body or
// the page's query.
type capacityRequest struct {
	DatasetID int64            `json:"dataset_id" validate:"min=1,max=2147483647" msg:"valid.capacity_dataset"`
	Traffic   conclude.Traffic `json:"traffic"`
	SLO       struct {
		TTFTms  float64 `json:"ttft_ms" validate:"finite,min=0,max=10000000" msg:"valid.capacity_ttft"`
		TPOTms  float64 `json:"tpot_ms" validate:"finite,min=0,max=10000000" msg:"valid.capacity_tpot"`
		E2Ems   float64 `json:"e2e_ms" validate:"finite,min=0,max=100000000" msg:"valid.capacity_e2e"`
		Goodput float64 `json:"goodput" validate:"finite,min=0,max=1" msg:"valid.capacity_goodput"`
	} `json:"slo"`
	Headroom float64        `json:"headroom" validate:"finite,min=0,max=0.9" msg:"valid.capacity_headroom"`
	Costs    conclude.Costs `json:"costs"`
	// MinQuality is the lowest quality a target may have, measured under
	// the scorer identity QualityScorer (which may be left out when the
	// dataset's targets were all scored under one).
	MinQuality    *float64 `json:"min_quality" validate:"omitnil,finite,min=0,max=1" msg:"valid.capacity_min_quality"`
	QualityScorer string   `json:"quality_scorer" validate:"max=20000,text" msg:"valid.capacity_scorer"`
	// Configuration, when set, is the one configuration replicas are
	// sized from (capacityConfiguration).
	Configuration *capacityConfiguration `json:"configuration"`
	// Today is what the user runs now, to weigh each target against
	// (monthly saving, quality difference, payback); nil: no comparison.
	Today *conclude.Today `json:"today"`
}

func (r capacityRequest) slo() jobs.SLO {
	d := func(ms float64) jobs.Duration { return jobs.Duration(time.Duration(ms * float64(time.Millisecond))) }
	return jobs.SLO{TTFT: d(r.SLO.TTFTms), TPOT: d(r.SLO.TPOTms), E2E: d(r.SLO.E2Ems), Goodput: r.SLO.Goodput}
}

// measure reads what one run says about serving under the planner's SLOs:
// a sweep's saturation point, or the one load a run measured when the
// SLOs held at it, at the rate the engine estimates for it
// (conclude.ReplicaRate). Its speed and cost are the engine's for cand,
// the run as every conclusion weighs it; a remote provider's run is
// priced by its tokens, not by its agent machine's hour.
func (s *server) measure(ctx context.Context, r capacityRun, cand conclude.Candidate, slo jobs.SLO) (conclude.Measured, error) {
	f := compare.NewFigures(r.RunFigures)
	m := conclude.Measured{RunID: r.ID, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile, Engine: r.Engine.Key(),
		GPUs:         conclude.ReplicaGPUs(r.GPUCount, r.Engine),
		PricePerHour: conclude.PricePerHour(r.RunFigures), Quality: r.Quality, QualityLo: r.QualityLo, QualityHi: r.QualityHi, JoulesPerToken: f.JPerToken,
		QualityScorer: r.scorer, TokenPrice: r.TokenPrice}.WeighedBy(cand)
	if m.TokenPrice != nil {
		m.PricePerHour, m.GPUs = nil, 0
	}
	if f.GPUSimulated {
		// Energy simulated from the load (--sim-gpu) is no measurement:
		// it sizes nothing and is never set against a measured one.
		m.JoulesPerToken = nil
	}
	var sum jobs.RunSummary
	if r.Summary == nil || json.Unmarshal(r.Summary, &sum) != nil || sum.Requests == 0 {
		return m.WithProblem(conclude.Say("capacity.said.no_figures")), nil
	}
	m.InputTokens = float64(sum.PromptTokens) / float64(sum.Requests)
	if sum.OK > 0 {
		m.OutputTokens = float64(sum.OutputTokens) / float64(sum.OK)
	}
	// The answers' lengths come from the summary written when the run
	// finished, never from its results (a plan weighs 50 runs).
	if o := sum.OutputLength; o != nil {
		m.OutputTokensP50, m.OutputTokensP90, m.OutputTokensMax = &o.P50, &o.P90, &o.Max
	}
	share := slo.GoodputShare()
	steps, err := summary.Steps(ctx, s.Store, r.ID, slo)
	if err != nil {
		return m, err
	}
	if len(steps) > 0 {
		for _, st := range steps {
			m.MaxMeasuredRPS = max(m.MaxMeasuredRPS, st.AchievedRPS)
		}
		sat := jobs.FindSaturation(steps, share)
		if sat.HoldsAtRPS == nil {
			return m.WithProblem(conclude.Say("capacity.said.slos_no_step", "Run", r.ID, "RPS", conclude.Dec{V: *sat.FailsAtRPS, Places: 2})), nil
		}
		m.SLORate, m.SLOFrom = sat.HoldsAtRPS, conclude.Say("capacity.said.from_step", "Run", r.ID, "Step", sat.HoldsStep)
		m.SLORateFrom = conclude.English(m.SLOFrom)
		return m, nil
	}
	agg, err := summary.Run(ctx, s.Store, r.ID, slo, 0)
	if err != nil {
		return m, err
	}
	m.MaxMeasuredRPS = agg.RequestsPerS
	if agg.Requests == 0 || float64(agg.GoodRequests) < share*float64(agg.Requests) || agg.RequestsPerS <= 0 {
		return m.WithProblem(conclude.Say("capacity.said.slos_one_load", "Good", agg.GoodRequests, "Requests", agg.Requests, "Run", r.ID,
			"RPS", conclude.Dec{V: agg.RequestsPerS, Places: 2}, "Share", conclude.Dec{V: share * 100})), nil
	}
	rate := agg.RequestsPerS
	if est, ok := conclude.ReplicaRate(cand); ok {
		lo := est.Lo
		rate, m.SLORateLo = est.Mean, &lo
		m.MaxMeasuredRPS = max(m.MaxMeasuredRPS, rate)
	}
	m.SLORate, m.SLOFrom = &rate, conclude.Say("capacity.said.from_one_load", "Run", r.ID)
	m.SLORateFrom = conclude.English(m.SLOFrom)
	return m, nil
}

// capacityRun is a candidate run with the scorer identity of its quality
// ("" when it has none) and the one the planner weighs quality under
// (weighQualities); left says why the planner lists it as not sized
// without weighing it (nil: it is weighed).
type capacityRun struct {
	store.RunFigures
	scorer, key string
	left        *conclude.PlannerLeft
}

// capacityCandidates returns the dataset's runs the planner weighs and
// those it lists as not sized (conclude.PlannerRuns: the dataset
// recommendation's candidates, repeats of a target kept for merging), and
// the scorer identities their qualities were measured under, sorted.
func (s *server) capacityCandidates(ctx context.Context, v store.Viewer, datasetID int64) ([]capacityRun, []string, error) {
	if _, err := s.Store.DatasetByID(ctx, v, datasetID); err != nil {
		return nil, nil, lookup("dataset", err)
	}
	// Imported results have no speed to size replicas from, but their
	// scores count towards the scorer identity the dataset's surfaces
	// share (conclude.DatasetScorer), and they are listed as not sized,
	// with why (conclude.ExcludedImported), not left out unsaid.
	all, err := s.Store.DatasetRuns(ctx, v, datasetID, conclude.DatasetRunsRead, true)
	if err != nil {
		return nil, nil, err
	}
	set := conclude.PlannerRuns(all, capacityRuns)
	out := make([]capacityRun, len(set.Runs), len(set.Runs)+len(set.Left))
	for i, r := range set.Runs {
		out[i].RunFigures = r
	}
	scorers := weighQualities(out, set.ScorerKey)
	for i := range set.Left {
		out = append(out, capacityRun{RunFigures: set.Left[i].Run, left: &set.Left[i]})
	}
	return out, scorers, nil
}

// weighQualities sets each run's quality as the planner weighs it under
// scorer identity wanted (the one the dataset's runs share, or a minimum
// quality's; conclude.CapacityQualities) and returns the identities those
// are under.
func weighQualities(runs []capacityRun, wanted string) []string {
	figs := make([]store.RunFigures, len(runs))
	for i, r := range runs {
		figs[i] = r.RunFigures
	}
	qs, scorers := conclude.CapacityQualities(figs, wanted)
	for i, q := range qs {
		runs[i].scorer, runs[i].key = q.Scorer, wanted
		runs[i].Quality, runs[i].QualityLo, runs[i].QualityHi = q.Mean, q.Lo, q.Hi
	}
	return scorers
}

// qualityFloor is the request's minimum quality under its scorer
// identity; nil without one. With no identity named it takes the only
// one present among the candidates, and with several it asks for one
// (a field error for quality_scorer, in loc's language).
func (req capacityRequest) qualityFloor(loc *i18n.Localizer, scorers []string) (*conclude.QualityFloor, map[string]string) {
	if req.MinQuality == nil {
		return nil, nil
	}
	q := &conclude.QualityFloor{Min: *req.MinQuality, Scorer: req.QualityScorer}
	if q.Scorer == "" {
		switch len(scorers) {
		case 0:
		case 1:
			q.Scorer = scorers[0]
		default:
			return nil, map[string]string{"quality_scorer": loc.T("capacity.error_choose_scorer", "Scorers", strings.Join(scorers, ", "))}
		}
	}
	return q, nil
}

// planCapacity answers a checked request over the dataset's candidate
// runs, listing those the planner leaves out as not sized.
func (s *server) planCapacity(ctx context.Context, req capacityRequest, runs []capacityRun, scorers []string, q *conclude.QualityFloor) (conclude.CapacityPlan, error) {
	var weighed []capacityRun
	var left []conclude.PlannerLeft
	for _, r := range runs {
		if r.left != nil {
			left = append(left, *r.left)
			continue
		}
		weighed = append(weighed, r)
	}
	if q != nil && q.Scorer != "" {
		// A run scored under the minimum's identity is weighed under it.
		weighQualities(weighed, q.Scorer)
	}
	ms, err := s.measureTargets(ctx, req.slo(), weighed)
	if err != nil {
		return conclude.CapacityPlan{}, err
	}
	plan := conclude.PlanCapacity(req.Traffic, req.Headroom, req.Costs, q, ms)
	if err := conclude.RankCapacity(ctx, s.Store, &plan, conclude.Evidence{}); err != nil {
		return plan, err
	}
	plan.ListLeft(left)
	plan.QualityScorers = scorers
	if plan.QualityScorers == nil {
		plan.QualityScorers = []string{}
	}
	if req.Today != nil {
		// planROI reads the newest runs first.
		newest := slices.Clone(weighed)
		slices.Reverse(newest)
		roi, err := s.planROI(ctx, req, newest, plan)
		if err != nil {
			return plan, err
		}
		plan.ROI = &roi
	}
	return plan, nil
}

// measureTargets is what each target among runs (oldest first, a
// target's first run first) says about serving under
// slo: the runs as every conclusion weighs them (with their deployments'
// between-run spread and their quality under the identity the planner
// weighs quality by), so the plan's figures and its cost claim are the
// verdict's (docs/benchmarks.md#capacity-planner); a target's repeats in
// one benchmark measured each and sized once (conclude.MergeMeasured).
func (s *server) measureTargets(ctx context.Context, slo jobs.SLO, runs []capacityRun) ([]conclude.Measured, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	figs := make([]store.RunFigures, len(runs))
	for i, r := range runs {
		figs[i] = r.RunFigures
	}
	cands, err := conclude.Weigh(ctx, s.Store, figs, runs[0].key)
	if err != nil {
		return nil, err
	}
	merged, members := conclude.RepeatsOf(cands)
	ms := make([]conclude.Measured, 0, len(merged))
	for k, idx := range members {
		if r := runs[idx[0]]; r.Mode == importedMode {
			ms = append(ms, conclude.Measured{RunID: r.ID, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile, Quality: r.Quality,
				QualityLo: r.QualityLo, QualityHi: r.QualityHi, QualityScorer: r.scorer, Imported: true}.WeighedBy(merged[k]))
			continue
		}
		each := make([]conclude.Measured, len(idx))
		for j, i := range idx {
			if each[j], err = s.measure(ctx, runs[i], cands[i], slo); err != nil {
				return nil, err
			}
		}
		ms = append(ms, conclude.MergeMeasured(each, merged[k]))
	}
	// The newest target first, as the plan lists targets of equal cost.
	slices.Reverse(ms)
	return ms, nil
}

// checkToday refuses today's hardware when there is no such profile; its
// field errors by path, in loc's language.
func (s *server) checkToday(ctx context.Context, loc *i18n.Localizer, req capacityRequest) (map[string]string, error) {
	if req.Today == nil {
		return nil, nil
	}
	_, err := s.Store.HardwareProfileBySlug(ctx, req.Today.Hardware)
	if errors.Is(err, store.ErrNotFound) {
		return map[string]string{"today.hardware": loc.T("capacity.error_no_hardware")}, nil
	}
	return nil, err
}

// planROI weighs the plan's sized targets against what the user runs
// today: its price from today's hardware profile, its energy and quality
// from the dataset's newest runs of today's model (on today's hardware
// when there is one), the quality differences from the kept paired
// comparisons under a scorer identity both were scored with.
func (s *server) planROI(ctx context.Context, req capacityRequest, runs []capacityRun, plan conclude.CapacityPlan) (conclude.ROI, error) {
	today := conclude.TodayMeasured{Today: *req.Today}
	hw, err := s.Store.HardwareProfileBySlug(ctx, req.Today.Hardware)
	if err != nil {
		return conclude.ROI{}, err
	}
	today.PricePerHour = hw.PricePerHour
	byID := map[int64]capacityRun{}
	var qualityRun *capacityRun
	for i, r := range runs { // newest first
		byID[r.ID] = r
		if r.ModelName != req.Today.Model {
			continue
		}
		if r.HardwareProfile == req.Today.Hardware && today.JoulesPerToken == nil {
			if f := compare.NewFigures(r.RunFigures); f.JPerToken != nil && !f.GPUSimulated {
				today.JoulesPerToken, today.EnergyRun = f.JPerToken, r.ID
			}
		}
		if len(r.Qualities) > 0 && (qualityRun == nil || (qualityRun.HardwareProfile != req.Today.Hardware && r.HardwareProfile == req.Today.Hardware)) {
			qualityRun = &runs[i]
		}
	}
	if qualityRun != nil {
		today.QualityRun, today.Qualities = qualityRun.ID, qualityRun.Qualities
	}
	// The paired comparisons each target needs, by scorer identity.
	keys := map[int64]string{}
	byKey := map[string][]int64{}
	for _, a := range plan.Feasible {
		k := conclude.ScorerInCommon(byID[a.RunID].Qualities, today.Qualities)
		keys[a.RunID] = k
		if k != "" && a.RunID != today.QualityRun {
			byKey[k] = append(byKey[k], a.RunID)
		}
	}
	var ev conclude.Evidence
	for k, ids := range byKey {
		pairs, err := conclude.QualityPairsWith(ctx, s.Store, k, today.QualityRun, ids)
		if err != nil {
			return conclude.ROI{}, err
		}
		for _, p := range pairs {
			ev.Paired = append(ev.Paired, conclude.Diff(p))
		}
	}
	return conclude.PlanROI(today, req.Traffic, req.Costs, plan, func(a conclude.Capacity) conclude.QualityChange {
		return conclude.QualityAgainst(a.RunID, byID[a.RunID].Qualities, today, keys[a.RunID], ev)
	}), nil
}

// apiCapacity is POST /api/v1/capacity: the capacity plan for a traffic
// profile over every target benchmarked on a dataset.
func (s *server) apiCapacity(c *fiber.Ctx) error {
	var req capacityRequest
	if errs := valid.DecodeJSON(c.Body(), &req); errs != nil {
		return fieldErrors422(c, errs)
	}
	if errs := s.validate.Struct(req); len(errs) > 0 {
		return apiFieldErrors(c, errs.Map())
	}
	ctx := c.UserContext()
	runs, scorers, err := s.capacityCandidates(ctx, viewer(c), req.DatasetID)
	if err != nil {
		return err
	}
	// The API answers in English.
	en := i18n.Default().Lang("en")
	if k := req.Configuration; k != nil {
		if errs := k.check(i18n.With(ctx, en)); len(errs) > 0 {
			return apiFieldErrors(c, errs)
		}
		runs = k.only(runs)
	}
	q, errs := req.qualityFloor(en, scorers)
	if errs == nil {
		if errs, err = s.checkToday(ctx, en, req); err != nil {
			return err
		}
	}
	if errs != nil {
		return apiFieldErrors(c, errs)
	}
	plan, err := s.planCapacity(ctx, req, runs, scorers, q)
	if err != nil {
		return err
	}
	return c.JSON(plan)
}

// fieldErrors lists field errors in path order, as the page shows them.
func fieldErrors(errs map[string]string) []fiber.Map {
	paths := make([]string, 0, len(errs))
	for p := range errs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	out := make([]fiber.Map, len(paths))
	for i, p := range paths {
		out[i] = fiber.Map{"path": p, "message": errs[p]}
	}
	return out
}

// showCapacityPage is the planner's page: the form, and the plan once a
// dataset and traffic are given (GET, so the URL is the plan).
func (s *server) showCapacityPage(c *fiber.Ctx) error {
	ctx := c.UserContext()
	datasets, err := s.Store.ListDatasets(ctx, viewer(c))
	if err != nil {
		return err
	}
	d := capacity.Data{Datasets: datasets, Form: readCapacityForm(c)}
	if d.Hardware, err = s.Store.ListHardwareProfiles(ctx, s.AgentStaleAfter); err != nil {
		return err
	}
	runs, err := s.capacityFormChoices(ctx, viewer(c), &d)
	if err != nil {
		return err
	}
	if d.Form.Dataset == "" || d.Form.PeakRPS == "" {
		return render(c, fiber.StatusOK, capacity.Page(d))
	}
	req, errs := capacityFormRequest(i18n.From(ctx), d.Form)
	k, kerrs := formConfiguration(ctx, d.Form)
	for p, m := range kerrs {
		errs[p] = m
	}
	if len(kerrs) == 0 {
		runs = k.only(runs)
	}
	q, err := s.checkCapacityForm(ctx, req, d.QualityScorers, errs)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		d.Errors = fieldErrors(errs)
		return render(c, fiber.StatusUnprocessableEntity, capacity.Page(d))
	}
	plan, err := s.planCapacity(ctx, req, runs, d.QualityScorers, q)
	if err != nil {
		return err
	}
	d.Plan = &plan
	return render(c, fiber.StatusOK, capacity.Page(d))
}

// readCapacityForm is the planner's form as typed, with its defaults.
func readCapacityForm(c *fiber.Ctx) capacity.Form {
	return capacity.Form{Dataset: c.Query("dataset"), PeakRPS: c.Query("peak_rps"), AverageRPS: c.Query("average_rps"),
		InputTokens: c.Query("input_tokens", "512"), OutputTokens: c.Query("output_tokens", "256"),
		TTFT: c.Query("ttft_ms", "1000"), TPOT: c.Query("tpot_ms", "100"), E2E: c.Query("e2e_ms"), Goodput: c.Query("goodput", "0.99"),
		Headroom: c.Query("headroom", "0.2"), Hours: c.Query("hours_per_month", "730.5"), Utilisation: c.Query("utilisation", "1"),
		EnergyPrice: c.Query("energy_price_per_kwh", "0.15"), Licence: c.Query("licence_per_month", "0"),
		MinQuality: c.Query("min_quality"), QualityScorer: c.Query("quality_scorer"),
		TodayModel: c.Query("today_model"), TodayHardware: c.Query("today_hardware"), TodayReplicas: c.Query("today_replicas"),
		MigrationCost: c.Query("migration_cost", "0"),
		ConfigModel:   c.Query("config_model"), ConfigRuntime: c.Query("config_runtime"), ConfigHardware: c.Query("config_hardware"),
		ConfigEngine: c.Query("config_engine")}
}

// capacityFormChoices fills what the form offers once a dataset is chosen
// (the scorer identities for the minimum quality's select, the models
// benchmarked on it) and returns the dataset's candidate runs.
func (s *server) capacityFormChoices(ctx context.Context, v store.Viewer, d *capacity.Data) ([]capacityRun, error) {
	id, err := parseID("dataset", d.Form.Dataset)
	if err != nil {
		return nil, nil
	}
	runs, scorers, err := s.capacityCandidates(ctx, v, id)
	if err != nil {
		return nil, err
	}
	d.QualityScorers = scorers
	if len(scorers) == 1 && d.Form.QualityScorer == "" {
		d.Form.QualityScorer = scorers[0]
	}
	for _, r := range runs {
		if !slices.Contains(d.Models, r.ModelName) {
			d.Models = append(d.Models, r.ModelName)
		}
	}
	slices.Sort(d.Models)
	return runs, nil
}

// capacityFormRequest turns the form into the API's request; numbers that
// do not parse are errors at the request path they belong to, in loc's
// language.
func capacityFormRequest(loc *i18n.Localizer, form capacity.Form) (capacityRequest, map[string]string) {
	var req capacityRequest
	errs := map[string]string{}
	num := func(path, raw string, dst *float64) {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			errs[path] = loc.T("capacity.error_number")
			return
		}
		*dst = v
	}
	if id, err := parseID("dataset", form.Dataset); err == nil {
		req.DatasetID = id
	}
	num("traffic.peak_rps", form.PeakRPS, &req.Traffic.PeakRPS)
	num("traffic.average_rps", form.AverageRPS, &req.Traffic.AverageRPS)
	if strings.TrimSpace(form.AverageRPS) == "" {
		req.Traffic.AverageRPS = req.Traffic.PeakRPS
	}
	num("traffic.input_tokens", form.InputTokens, &req.Traffic.InputTokens)
	num("traffic.output_tokens", form.OutputTokens, &req.Traffic.OutputTokens)
	num("slo.ttft_ms", form.TTFT, &req.SLO.TTFTms)
	num("slo.tpot_ms", form.TPOT, &req.SLO.TPOTms)
	num("slo.e2e_ms", form.E2E, &req.SLO.E2Ems)
	num("slo.goodput", form.Goodput, &req.SLO.Goodput)
	num("headroom", form.Headroom, &req.Headroom)
	num("costs.hours_per_month", form.Hours, &req.Costs.HoursPerMonth)
	num("costs.utilisation", form.Utilisation, &req.Costs.Utilisation)
	num("costs.energy_price_per_kwh", form.EnergyPrice, &req.Costs.EnergyPricePerKWh)
	num("costs.licence_per_month", form.Licence, &req.Costs.LicencePerMonth)
	if strings.TrimSpace(form.MinQuality) != "" {
		req.MinQuality = new(float64)
		num("min_quality", form.MinQuality, req.MinQuality)
	}
	req.QualityScorer = form.QualityScorer
	if strings.TrimSpace(form.TodayModel) != "" {
		req.Today = &conclude.Today{Model: strings.TrimSpace(form.TodayModel), Hardware: strings.TrimSpace(form.TodayHardware)}
		replicas := 0.0
		num("today.replicas", form.TodayReplicas, &replicas)
		if replicas != math.Trunc(replicas) {
			errs["today.replicas"] = loc.T("capacity.error_whole_replicas")
		}
		req.Today.Replicas = int(min(max(replicas, -1), 1e9))
		num("today.migration_cost", form.MigrationCost, &req.Today.MigrationCost)
	}
	return req, errs
}

// checkCapacityForm adds to errs what the API's rules refuse in req (a
// number's own parse error first), and returns the quality floor.
func (s *server) checkCapacityForm(ctx context.Context, req capacityRequest, scorers []string, errs map[string]string) (*conclude.QualityFloor, error) {
	for p, m := range s.validate.Struct(req).MapText(ctx) {
		if _, seen := errs[p]; !seen {
			errs[p] = m
		}
	}
	loc := i18n.From(ctx)
	q, qerrs := req.qualityFloor(loc, scorers)
	for p, m := range qerrs {
		errs[p] = m
	}
	if _, seen := errs["today.hardware"]; !seen && req.Today != nil {
		terrs, err := s.checkToday(ctx, loc, req)
		if err != nil {
			return q, err
		}
		for p, m := range terrs {
			errs[p] = m
		}
	}
	return q, nil
}
