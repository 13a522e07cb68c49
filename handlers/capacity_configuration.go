package handlers

import (
	"context"
	"strings"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/capacity"
)

// capacityConfiguration is one configuration (model × runtime × hardware
// × engine settings) the planner sizes replicas from alone, as the
// best-configuration page's winner opens it
// (docs/verdict.md#the-best-configuration).
type capacityConfiguration struct {
	Model    string         `json:"model"`
	Runtime  string         `json:"runtime"`
	Hardware string         `json:"hardware"`
	Engine   map[string]any `json:"engine"`
	// engine is Engine checked against the runtime's table.
	engine jobs.Engine
}

// maxConfigurationName bounds the configuration's names (a model's name
// is at most 200 characters).
const maxConfigurationName = 200

// check checks the configuration: its names given and bounded, its
// settings the runtime's (jobs.CheckEngine, as a benchmark's targets are
// checked); errors by request path in ctx's language.
func (k *capacityConfiguration) check(ctx context.Context) map[string]string {
	errs := map[string]string{}
	loc := i18n.From(ctx)
	for path, v := range map[string]string{"configuration.model": k.Model, "configuration.runtime": k.Runtime, "configuration.hardware": k.Hardware} {
		if strings.TrimSpace(v) == "" || len(v) > maxConfigurationName {
			errs[path] = loc.T("capacity.error_configuration_name", "Max", maxConfigurationName)
		}
	}
	engine, faults := jobs.CheckEngine(k.Runtime, k.Engine, -1)
	for _, f := range faults {
		fe := valid.FromError("configuration.engine."+f.Name, f.Err)
		errs[fe.Path] = fe.Text(ctx)
	}
	k.engine = engine
	return errs
}

// only keeps the runs of the configuration (all of them without one).
func (k *capacityConfiguration) only(runs []capacityRun) []capacityRun {
	if k == nil {
		return runs
	}
	var out []capacityRun
	for _, r := range runs {
		if r.ModelName == k.Model && r.Runtime == k.Runtime && r.HardwareProfile == k.Hardware && r.Engine.Key() == k.engine.Key() {
			out = append(out, r)
		}
	}
	return out
}

// formConfiguration is the form's configuration (config_model,
// config_runtime, config_hardware and config_engine, the settings as
// "name=value" pairs, jobs.ParseEngineText); nil when no model is named.
func formConfiguration(ctx context.Context, form capacity.Form) (*capacityConfiguration, map[string]string) {
	if strings.TrimSpace(form.ConfigModel) == "" {
		return nil, nil
	}
	k := &capacityConfiguration{Model: form.ConfigModel, Runtime: form.ConfigRuntime, Hardware: form.ConfigHardware}
	raw, err := jobs.ParseEngineText(form.ConfigEngine)
	if err != nil {
		fe := valid.FromError("configuration.engine", err)
		return k, map[string]string{fe.Path: fe.Text(ctx)}
	}
	k.Engine = raw
	return k, k.check(ctx)
}
