package launch

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"text/template"
	"unicode"
	"unicode/utf8"
)

// Plan is a rendered Spec: exactly what Start runs and where it looks.
type Plan struct {
	// Runtime is the canonical runtime name.
	Runtime string
	Argv    []string
	// Env is what is added to agentd's environment.
	Env []string
	// Prepare holds the prepare steps that apply.
	Prepare [][]string
	// ReadyURL answers 2xx once the server is up; ModelsURL (optional)
	// lists the model once it is registered.
	ReadyURL  string
	ModelsURL string
	// Load is the load request, nil when the template has none.
	Load *PlannedRequest
	// MetricsURL is the Prometheus endpoint, empty when there is none.
	MetricsURL string
	// BaseURL is the OpenAI-compatible API's root, such as
	// http://127.0.0.1:8000/v1.
	BaseURL string
	// RequestModel is, for an adapter, the model name requests give to
	// reach it (its runtime's name for it); empty otherwise: the spec's
	// Model.
	RequestModel string
}

// PlannedRequest is a rendered Request.
type PlannedRequest struct {
	Method, URL, Body string
}

// Render renders spec's template with spec's values as given: Port must be
// set (Start picks one first when it is 0), and a Modelfile that Start
// would write is not assumed.
func Render(spec Spec) (Plan, error) {
	spec = spec.withDefaults()
	t, name, err := spec.template()
	if err != nil {
		return Plan{}, err
	}
	if err := spec.checkValues(name); err != nil {
		return Plan{}, err
	}
	if t.NeedsModelPath && spec.ModelPath == "" {
		return Plan{}, fmt.Errorf("launch: %s needs a model path (it cannot fetch %q by name)", name, spec.Model)
	}
	if spec.Port < 1 || spec.Port > 65535 {
		return Plan{}, fmt.Errorf("launch: %s: port %d out of range", name, spec.Port)
	}
	vars := Vars{Model: spec.Model, BaseModel: spec.Model, ModelPath: spec.ModelPath, Modelfile: spec.Modelfile,
		Host: spec.Host, Port: spec.Port, WorkDir: spec.WorkDir}
	args := append(slices.Clone(t.Command), spec.ExtraArgs...)
	if a := spec.Adapter; a != nil {
		if err := checkAdapter(name, t, spec); err != nil {
			return Plan{}, err
		}
		vars.BaseModel, vars.AdapterPath = a.Base, a.Path
		args = append(args, t.LoRA...)
	}
	r := renderer{vars: vars}
	p := Plan{Runtime: name}
	if spec.Adapter != nil {
		p.RequestModel = spec.Model
		if t.LoRAModel != "" {
			if p.RequestModel, err = r.render("lora model", t.LoRAModel); err != nil {
				return Plan{}, err
			}
		}
	}
	if p.Argv, err = r.argv("command", args); err != nil {
		return Plan{}, err
	}
	if len(p.Argv) == 0 {
		return Plan{}, fmt.Errorf("launch: %s: empty command", name)
	}
	if p.Env, err = r.env(append(slices.Clone(t.Env), spec.Env...)); err != nil {
		return Plan{}, err
	}
	// Engine settings are not templates: the table's flags and checked
	// values, appended as they are.
	engineArgs, engineEnv, err := spec.Engine.Args(name)
	if err != nil {
		return Plan{}, fmt.Errorf("launch: %s: %w", name, err)
	}
	p.Argv, p.Env = append(p.Argv, engineArgs...), append(p.Env, engineEnv...)
	if p.Prepare, err = r.prepare(t.Prepare); err != nil {
		return Plan{}, err
	}
	if err := p.setURLs(r, t, spec); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// env renders the environment entries, each of which must come out as
// KEY=VALUE.
func (r renderer) env(entries []string) ([]string, error) {
	var env []string
	for _, e := range entries {
		v, err := r.render("env", e)
		if err != nil {
			return nil, err
		}
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return nil, fmt.Errorf("launch: environment entry %q is not KEY=VALUE", v)
		}
		env = append(env, v)
	}
	return env, nil
}

// prepare renders the prepare steps whose condition renders non-blank;
// a step that renders to no arguments is left out.
func (r renderer) prepare(steps []Step) ([][]string, error) {
	var out [][]string
	for _, st := range steps {
		cond := "true"
		if st.If != "" {
			var err error
			if cond, err = r.render("prepare if", st.If); err != nil {
				return nil, err
			}
		}
		if strings.TrimSpace(cond) == "" {
			continue
		}
		argv, err := r.argv("prepare", st.Argv)
		if err != nil {
			return nil, err
		}
		if len(argv) > 0 {
			out = append(out, argv)
		}
	}
	return out, nil
}

// setURLs fills the plan's URLs, all on the host and port the runtime
// listens on; the metrics URL only when the command turns metrics on
// (or the runtime always serves them).
func (p *Plan) setURLs(r renderer, t Template, spec Spec) error {
	root := "http://" + hostPort(connectHost(spec.Host), spec.Port)
	p.ReadyURL = root + ensureSlash(t.ReadyPath)
	if t.ModelsPath != "" {
		p.ModelsURL = root + ensureSlash(t.ModelsPath)
	}
	if t.Load != nil {
		body, err := r.render("load body", t.Load.Body)
		if err != nil {
			return err
		}
		method := t.Load.Method
		if method == "" {
			method = "POST"
		}
		p.Load = &PlannedRequest{Method: method, URL: root + ensureSlash(t.Load.Path), Body: body}
	}
	if t.MetricsPath != "" && (t.MetricsFlag == "" || slices.Contains(p.Argv, t.MetricsFlag)) {
		p.MetricsURL = root + ensureSlash(t.MetricsPath)
	}
	p.BaseURL = root + strings.TrimRight(ensureSlash(t.APIPath), "/")
	return nil
}

// checkAdapter refuses an adapter the runtime cannot serve: one whose
// template has no LoRA arguments (TGI, Ollama, a runtime of the user's
// own), or that needs a file it was not given.
func checkAdapter(name string, t Template, spec Spec) error {
	a := spec.Adapter
	switch {
	case len(t.LoRA) == 0:
		return fmt.Errorf("launch: %s cannot serve %q: it is a LoRA adapter of %q, and Ruckus launches adapters only on vllm (--enable-lora --lora-modules), sglang (--lora-paths) and llama-cpp (--lora); serve the merged model instead, or run it on one of those",
			name, spec.Model, a.Base)
	case a.Base == "":
		return fmt.Errorf("launch: %s: the adapter %q names no base model", name, spec.Model)
	case a.Path == "":
		return fmt.Errorf("launch: %s: the adapter %q has no weights: give its path (--model-path %s=PATH)", name, spec.Model, spec.Model)
	}
	return nil
}

// maxArgValue bounds a model name or path put on a command line.
const maxArgValue = 4096

// checkValues refuses a spec whose model name or paths could be read as
// something else than the value they are: a runtime's option (a leading
// "-": a model renamed "--trust-remote-code" must not reach vllm serve as
// that flag), another line of the Modelfile written from the path (a line
// break), or nothing at all (a NUL ends a C string). The model name comes
// from the job, so from the database, which a GPU node does not trust.
func (s Spec) checkValues(runtime string) error {
	if strings.TrimSpace(s.Model) == "" {
		return fmt.Errorf("launch: %s: no model given", runtime)
	}
	vals := []struct{ what, val string }{{"model", s.Model}, {"model path", s.ModelPath}, {"Modelfile", s.Modelfile}}
	if s.Adapter != nil {
		vals = append(vals, struct{ what, val string }{"base model", s.Adapter.Base}, struct{ what, val string }{"adapter path", s.Adapter.Path})
	}
	for _, v := range vals {
		if err := CheckArgValue(v.val); err != nil {
			return fmt.Errorf("launch: %s: refusing %s %q: %w", runtime, v.what, v.val, err)
		}
	}
	return nil
}

// CheckArgValue says why v cannot be passed as one argument's value on a
// runtime's command line (see Spec's model name and paths), nil when it can.
func CheckArgValue(v string) error {
	switch {
	case strings.HasPrefix(v, "-"):
		return errors.New(`it begins with "-", so the runtime would read it as an option`)
	case len(v) > maxArgValue:
		return fmt.Errorf("it is longer than %d bytes", maxArgValue)
	case !utf8.ValidString(v):
		return errors.New("it is not UTF-8 text")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return errors.New("it holds a control character (a line break, a NUL, …)")
	}
	return nil
}

type renderer struct{ vars Vars }

func (r renderer) render(what, text string) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := template.New(what).Option("missingkey=error").
		Funcs(template.FuncMap{"json": jsonString, "hostport": hostPort}).Parse(text)
	if err != nil {
		return "", fmt.Errorf("launch: %s template %q: %w", what, text, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, r.vars); err != nil {
		return "", fmt.Errorf("launch: %s template %q: %w", what, text, err)
	}
	return b.String(), nil
}

// argv renders each argument; those that render empty are dropped.
func (r renderer) argv(what string, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		v, err := r.render(what, a)
		if err != nil {
			return nil, err
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out, nil
}

// connectHost is where agentd reaches a server listening on host: loopback
// for the unspecified addresses.
func connectHost(host string) string {
	if host == "" {
		return DefaultHost
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			return "127.0.0.1"
		}
		return "::1"
	}
	return host
}

func ensureSlash(path string) string {
	if path == "" || path[0] != '/' {
		return "/" + path
	}
	return path
}

// FreePort asks the system for a TCP port that is free on host now.
func FreePort(host string) (int, error) {
	return freePort(net.Listen, host)
}

// freePort binds port 0 on host through listen, reads the port the system
// chose and lets it go again.
func freePort(listen func(network, address string) (net.Listener, error), host string) (int, error) {
	if host == "" {
		host = DefaultHost
	}
	ln, err := listen("tcp", net.JoinHostPort(strings.Trim(host, "[]"), "0"))
	if err != nil {
		return 0, fmt.Errorf("launch: pick a free port on %s: %w", host, err)
	}
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("launch: pick a free port: not a TCP address")
	}
	return addr.Port, nil
}
