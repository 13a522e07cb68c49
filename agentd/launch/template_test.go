package launch

import (
	"errors"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/jobs"
)

func TestRenderShipped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec Spec
		want Plan
	}{
		{
			name: "vllm by name",
			spec: Spec{Runtime: "vllm", Model: "Qwen/Qwen2.5-7B-Instruct", Port: 8000},
			want: Plan{
				Runtime: VLLM,
				Argv: []string{"vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--host=127.0.0.1", "--port=8000",
					"--served-model-name=Qwen/Qwen2.5-7B-Instruct"},
				ReadyURL:   "http://127.0.0.1:8000/health",
				MetricsURL: "http://127.0.0.1:8000/metrics",
				BaseURL:    "http://127.0.0.1:8000/v1",
			},
		},
		{
			name: "vllm from local weights, extra args, all interfaces",
			spec: Spec{Runtime: "VLLM", Model: "qwen-7b", ModelPath: "/models/Qwen 7B", Host: "0.0.0.0", Port: 8001,
				ExtraArgs: Argv{"--max-model-len", "4096", "--download-dir", "{{.WorkDir}}/hf"}, WorkDir: "/srv",
				Env: []string{"HF_HOME={{.WorkDir}}/hf"}},
			want: Plan{
				Runtime: VLLM,
				Argv: []string{"vllm", "serve", "/models/Qwen 7B", "--host=0.0.0.0", "--port=8001",
					"--served-model-name=qwen-7b", "--max-model-len", "4096", "--download-dir", "/srv/hf"},
				Env:        []string{"HF_HOME=/srv/hf"},
				ReadyURL:   "http://127.0.0.1:8001/health",
				MetricsURL: "http://127.0.0.1:8001/metrics",
				BaseURL:    "http://127.0.0.1:8001/v1",
			},
		},
		{
			name: "sglang",
			spec: Spec{Runtime: "sglang", Model: "meta-llama/Llama-3.1-8B-Instruct", Port: 30000},
			want: Plan{
				Runtime: SGLang,
				Argv: []string{"python3", "-m", "sglang.launch_server", "--model-path=meta-llama/Llama-3.1-8B-Instruct",
					"--host=127.0.0.1", "--port=30000", "--served-model-name=meta-llama/Llama-3.1-8B-Instruct",
					"--enable-metrics"},
				ReadyURL:   "http://127.0.0.1:30000/health",
				MetricsURL: "http://127.0.0.1:30000/metrics",
				BaseURL:    "http://127.0.0.1:30000/v1",
			},
		},
		{
			name: "tgi on IPv6 loopback",
			spec: Spec{Runtime: "tgi", Model: "mistralai/Mistral-7B-Instruct-v0.3", Host: "[::1]", Port: 3000},
			want: Plan{
				Runtime: TGI,
				Argv: []string{"text-generation-launcher", "--model-id=mistralai/Mistral-7B-Instruct-v0.3",
					"--hostname=::1", "--port=3000"},
				ReadyURL:   "http://[::1]:3000/health",
				MetricsURL: "http://[::1]:3000/metrics",
				BaseURL:    "http://[::1]:3000/v1",
			},
		},
		{
			name: "llama.cpp",
			spec: Spec{Runtime: "llama.cpp", Model: "tiny", ModelPath: "/models/tiny.gguf", Port: 8080,
				ExtraArgs: Argv{"-c", "2048"}},
			want: Plan{
				Runtime: LlamaCpp,
				Argv: []string{"llama-server", "-m", "/models/tiny.gguf", "--host", "127.0.0.1", "--port", "8080",
					"--alias", "tiny", "--metrics", "-c", "2048"},
				ReadyURL:   "http://127.0.0.1:8080/health",
				MetricsURL: "http://127.0.0.1:8080/metrics",
				BaseURL:    "http://127.0.0.1:8080/v1",
			},
		},
		{
			name: "llama.cpp command without --metrics has no metrics",
			spec: Spec{Runtime: "llama-cpp", Model: "tiny", ModelPath: "/m.gguf", Port: 8080,
				Command: Argv{"/opt/llama/llama-server", "-m", "{{.ModelPath}}", "--port", "{{.Port}}"}},
			want: Plan{
				Runtime:  LlamaCpp,
				Argv:     []string{"/opt/llama/llama-server", "-m", "/m.gguf", "--port", "8080"},
				ReadyURL: "http://127.0.0.1:8080/health",
				BaseURL:  "http://127.0.0.1:8080/v1",
			},
		},
		{
			name: "ollama with a Modelfile",
			spec: Spec{Runtime: "ollama", Model: `tiny"q`, Modelfile: "/work/Modelfile", Port: 11434},
			want: Plan{
				Runtime:   Ollama,
				Argv:      []string{"ollama", "serve"},
				Env:       []string{"OLLAMA_HOST=127.0.0.1:11434", "OLLAMA_KEEP_ALIVE=-1"},
				Prepare:   [][]string{{"ollama", "create", "--file=/work/Modelfile", "--", `tiny"q`}},
				ReadyURL:  "http://127.0.0.1:11434/api/version",
				ModelsURL: "http://127.0.0.1:11434/v1/models",
				Load:      &PlannedRequest{Method: "POST", URL: "http://127.0.0.1:11434/api/generate", Body: `{"model":"tiny\"q"}`},
				BaseURL:   "http://127.0.0.1:11434/v1",
			},
		},
		{
			name: "ollama with a pulled model: no prepare step",
			spec: Spec{Runtime: "ollama", Model: "qwen2.5:0.5b", Host: "::", Port: 11435},
			want: Plan{
				Runtime:   Ollama,
				Argv:      []string{"ollama", "serve"},
				Env:       []string{"OLLAMA_HOST=[::]:11435", "OLLAMA_KEEP_ALIVE=-1"},
				ReadyURL:  "http://[::1]:11435/api/version",
				ModelsURL: "http://[::1]:11435/v1/models",
				Load:      &PlannedRequest{Method: "POST", URL: "http://[::1]:11435/api/generate", Body: `{"model":"qwen2.5:0.5b"}`},
				BaseURL:   "http://[::1]:11435/v1",
			},
		},
		{
			name: "unknown runtime with a command string",
			spec: Spec{Runtime: "my-server", Model: "m", Port: 9000,
				Command: mustSplit(t, `my-server --model "{{ .Model }}" --listen {{hostport .Host .Port}} --flag ''`)},
			want: Plan{
				Runtime:  "my-server",
				Argv:     []string{"my-server", "--model", "m", "--listen", "127.0.0.1:9000", "--flag"},
				ReadyURL: "http://127.0.0.1:9000/v1/models",
				BaseURL:  "http://127.0.0.1:9000/v1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.spec)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Render:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestRenderRefusesValuesReadAsOptions: for every shipped template, a
// model name or a path that a runtime would read as an option (a model
// renamed "--trust-remote-code" in the database) or as more than one value
// (a line break in the path written into a Modelfile) is refused with a
// message naming it, and nothing is rendered; names and paths that merely
// contain a dash render as given.
func TestRenderRefusesValuesReadAsOptions(t *testing.T) {
	t.Parallel()
	for _, rt := range Runtimes() {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			good := Spec{Runtime: rt, Model: "org/model-7b", ModelPath: "/models/a-b/model-7b.gguf", Port: 8000}
			p, err := Render(good)
			if err != nil {
				t.Fatalf("a valid spec: %v", err)
			}
			if rt != Ollama && !slices.ContainsFunc(p.Argv, func(a string) bool { return strings.HasSuffix(a, "/models/a-b/model-7b.gguf") }) {
				t.Errorf("the model path is not in the command: %q", p.Argv)
			}
			for _, tc := range []struct {
				what string
				spec Spec
				want string
			}{
				{"model", Spec{Model: "--trust-remote-code", ModelPath: good.ModelPath}, `refusing model "--trust-remote-code": it begins with "-"`},
				{"model", Spec{Model: "-m", ModelPath: good.ModelPath}, `refusing model "-m"`},
				{"model path", Spec{Model: good.Model, ModelPath: "--chat-template=/tmp/evil.jinja"}, `refusing model path "--chat-template=/tmp/evil.jinja": it begins with "-"`},
				{"model path", Spec{Model: good.Model, ModelPath: "/m.gguf\nADAPTER /tmp/evil"}, "control character"},
				{"model path", Spec{Model: good.Model, ModelPath: "/m.gguf\x00--x"}, "control character"},
				{"Modelfile", Spec{Model: good.Model, ModelPath: good.ModelPath, Modelfile: "-"}, `refusing Modelfile "-"`},
				{"model", Spec{Model: "m\xff", ModelPath: good.ModelPath}, "not UTF-8"},
				{"model path", Spec{Model: good.Model, ModelPath: "/" + strings.Repeat("a", maxArgValue)}, "longer than"},
			} {
				tc.spec.Runtime, tc.spec.Port = rt, 8000
				p, err := Render(tc.spec)
				if err == nil {
					t.Errorf("%s %q: rendered %q", tc.what, tc.spec.Model+" "+tc.spec.ModelPath, p.Argv)
					continue
				}
				if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), rt) {
					t.Errorf("%s: error %q, want it to name the runtime and say %q", tc.what, err, tc.want)
				}
			}
		})
	}
}

func mustSplit(t *testing.T, s string) Argv {
	t.Helper()
	words, err := SplitCommand(s)
	if err != nil {
		t.Fatal(err)
	}
	return words
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Runtime: "nope", Model: "m", Port: 1}, `unknown runtime "nope" (shipped: llama-cpp, ollama, sglang, tgi, vllm)`},
		{Spec{Runtime: "vllm", Port: 1}, "vllm: no model given"},
		{Spec{Runtime: "llama-cpp", Model: "m", Port: 1}, "llama-cpp needs a model path"},
		{Spec{Runtime: "vllm", Model: "m"}, "port 0 out of range"},
		{Spec{Runtime: "vllm", Model: "m", Port: 1, ExtraArgs: Argv{"{{.Nope}}"}}, "can't evaluate field Nope"},
		{Spec{Runtime: "vllm", Model: "m", Port: 1, ExtraArgs: Argv{"{{.Model"}}, "unclosed action"},
		{Spec{Runtime: "vllm", Model: "m", Port: 1, Env: []string{"NOEQUALS"}}, `"NOEQUALS" is not KEY=VALUE`},
		{Spec{Runtime: "x", Model: "m", Port: 1, Command: Argv{"{{if false}}x{{end}}"}}, "empty command"},
	}
	for _, tt := range tests {
		_, err := Render(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Render(%+v) = %v, want %q", tt.spec, err, tt.want)
		}
	}
}

// TestShippedTemplatesNoShell: every shipped template runs a program, not a
// shell, and renders for a typical spec.
func TestShippedTemplatesNoShell(t *testing.T) {
	t.Parallel()
	for _, name := range Runtimes() {
		tmpl, canon, ok := Lookup(name)
		if !ok || canon != name {
			t.Fatalf("Lookup(%q) = %v, %q", name, ok, canon)
		}
		switch tmpl.Command[0] {
		case "sh", "bash", "/bin/sh", "/bin/bash":
			t.Errorf("%s runs a shell", name)
		}
		p, err := Render(Spec{Runtime: name, Model: "m; rm -rf /", ModelPath: "/m $(x).gguf", Port: 1234})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.HasPrefix(p.ReadyURL, "http://127.0.0.1:1234/") || p.BaseURL != "http://127.0.0.1:1234/v1" {
			t.Errorf("%s: URLs %q %q", name, p.ReadyURL, p.BaseURL)
		}
	}
	// Lookup hands out copies.
	a, _, _ := Lookup(VLLM)
	a.Command[0] = "changed"
	if b, _, _ := Lookup(VLLM); b.Command[0] != "vllm" {
		t.Error("Lookup shares the shipped template")
	}
}

func TestSplitCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: nil},
		{in: "  a  b\tc\n", want: []string{"a", "b", "c"}},
		{in: `a 'b c' "d e" f\ g`, want: []string{"a", "b c", "d e", "f g"}},
		{in: `'it''s' "say \"hi\" \\ \n"`, want: []string{"its", `say "hi" \ \n`}},
		{in: `x"y"'z'`, want: []string{"xyz"}},
		{in: `"" ''`, want: []string{"", ""}},
		{in: `--model {{ .Model }} --x={{printf "%s %s" .Host "y"}}z`, want: []string{"--model", "{{ .Model }}", `--x={{printf "%s %s" .Host "y"}}z`}},
		{in: `$HOME ~ *.gguf a;b`, want: []string{"$HOME", "~", "*.gguf", "a;b"}},
		{in: `a 'b`, err: "unterminated single quote"},
		{in: `a "b`, err: "unterminated double quote"},
		{in: `a {{ .Model`, err: "unterminated {{"},
		{in: `a\`, err: "ends with a backslash"},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("SplitCommand(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSpecYAML(t *testing.T) {
	t.Parallel()
	var spec Spec
	err := yaml.Unmarshal([]byte(`
runtime: vllm
model: m
command: "vllm serve {{.Model}} --port {{.Port}} --chat-template '/t/my template.jinja'"
extra_args: [--max-model-len, "4096"]
ready_timeout: 20m
env: [CUDA_VISIBLE_DEVICES=0]
`), &spec)
	if err != nil {
		t.Fatal(err)
	}
	want := Argv{"vllm", "serve", "{{.Model}}", "--port", "{{.Port}}", "--chat-template", "/t/my template.jinja"}
	if !reflect.DeepEqual(spec.Command, want) || !reflect.DeepEqual(spec.ExtraArgs, Argv{"--max-model-len", "4096"}) ||
		spec.ReadyTimeout.Minutes() != 20 || spec.Env[0] != "CUDA_VISIBLE_DEVICES=0" {
		t.Errorf("spec %+v", spec)
	}
	if err := yaml.Unmarshal([]byte("command: {a: b}"), &spec); err == nil {
		t.Error("a mapping as command was accepted")
	}

	var a Argv
	if err := a.Set(`--a 'b c'`); err != nil {
		t.Fatal(err)
	}
	if err := a.Set(`--d`); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, Argv{"--a", "b c", "--d"}) || a.String() != `--a 'b c' --d` {
		t.Errorf("Argv flag: %q %q", a, a.String())
	}
}

// closeRecorder is a listener that remembers being closed.
type closeRecorder struct {
	net.Listener
	closed bool
}

func (l *closeRecorder) Close() error {
	l.closed = true
	return l.Listener.Close()
}

// TestFreePort checks what FreePort promises without racing other processes
// for the port: it asks the system for port 0 on the right address, returns
// the port the system bound and releases it. Re-binding the port afterwards
// would test the machine's other tenants, not FreePort.
func TestFreePort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ host, want string }{
		{"", "127.0.0.1:0"},
		{"127.0.0.1", "127.0.0.1:0"},
		{"[::1]", "[::1]:0"},
		{"::1", "[::1]:0"},
	} {
		var asked []string
		var held *closeRecorder
		listen := func(network, address string) (net.Listener, error) {
			asked = append(asked, network+" "+address)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, err
			}
			held = &closeRecorder{Listener: ln}
			return held, nil
		}
		port, err := freePort(listen, tc.host)
		if err != nil {
			t.Fatalf("host %q: %v", tc.host, err)
		}
		if !slices.Equal(asked, []string{"tcp " + tc.want}) {
			t.Errorf("host %q: listened on %q, want [tcp %s]", tc.host, asked, tc.want)
		}
		if want := held.Addr().(*net.TCPAddr).Port; port != want {
			t.Errorf("host %q: port %d, the listener had %d", tc.host, port, want)
		}
		if !held.closed {
			t.Errorf("host %q: the port is still held", tc.host)
		}
	}

	refused := errors.New("address in use")
	if _, err := freePort(func(string, string) (net.Listener, error) { return nil, refused }, ""); !errors.Is(err, refused) {
		t.Errorf("a refused listen: %v, want it wrapped", err)
	}

	port, err := FreePort("")
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("port %d", port)
	}
	if _, err := FreePort("203.0.113.7"); err == nil {
		t.Error("FreePort on an address not ours succeeded")
	}
}

func TestRing(t *testing.T) {
	t.Parallel()
	r := newRing(8)
	r.write([]byte("abc"))
	if b, cut := r.bytes(); string(b) != "abc" || cut {
		t.Errorf("%q %v", b, cut)
	}
	r.write([]byte("defgh"))
	if b, cut := r.bytes(); string(b) != "abcdefgh" || !cut {
		t.Errorf("exactly full: %q %v", b, cut)
	}
	r.write([]byte("ij"))
	if b, _ := r.bytes(); string(b) != "cdefghij" {
		t.Errorf("wrapped: %q", b)
	}
	r.write([]byte("klmnopq")) // splits across the end
	if b, _ := r.bytes(); string(b) != "jklmnopq" {
		t.Errorf("split write: %q", b)
	}
	r.write([]byte("0123456789"))
	if b, _ := r.bytes(); string(b) != "23456789" {
		t.Errorf("longer than the ring: %q", b)
	}
}

func TestTailString(t *testing.T) {
	t.Parallel()
	s, err := newLogSink("", 16)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = s.Write([]byte("first line\nsecond\x00 line\nthird\n"))
	if got := s.tailString(); got != "third\n" {
		t.Errorf("tail %q", got)
	}
	_, _ = s.Write([]byte("\xffbad utf8 here\n"))
	if got := s.tailString(); strings.ContainsRune(got, 0) || !strings.HasSuffix(got, "utf8 here\n") {
		t.Errorf("tail %q", got)
	}
	if got := errorTail(strings.Repeat("line\n", 100)); strings.Count(got, "\n") != 39 {
		t.Errorf("errorTail kept %d lines", strings.Count(got, "\n")+1)
	}
	if errorTail("") != "(no output)" {
		t.Error("empty tail")
	}
}

// A LoRA adapter reaches the runtimes that take one with their own
// arguments — vLLM a LoRA module named as the adapter (--enable-lora
// --lora-modules), SGLang --lora-paths asked for as "BASE:adapter",
// llama.cpp --lora on the base's GGUF — the base model loaded and served
// under its own name; the others refuse it, saying which runtimes do.
func TestRenderAdapters(t *testing.T) {
	t.Parallel()
	lora := &Adapter{Base: "Qwen/Qwen2.5-7B-Instruct", Path: "/adapters/sql"}
	tests := []struct {
		name         string
		spec         Spec
		argv         []string
		requestModel string
	}{
		{"vllm", Spec{Runtime: "vllm", Model: "acme/qwen-sql-lora", Port: 8000, Adapter: lora},
			[]string{"vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--host=127.0.0.1", "--port=8000", "--served-model-name=Qwen/Qwen2.5-7B-Instruct",
				"--enable-lora", "--lora-modules=acme/qwen-sql-lora=/adapters/sql"}, "acme/qwen-sql-lora"},
		{"vllm, base from local weights", Spec{Runtime: "vllm", Model: "acme/qwen-sql-lora", ModelPath: "/models/qwen", Port: 8000, Adapter: lora},
			[]string{"vllm", "serve", "/models/qwen", "--host=127.0.0.1", "--port=8000", "--served-model-name=Qwen/Qwen2.5-7B-Instruct",
				"--enable-lora", "--lora-modules=acme/qwen-sql-lora=/adapters/sql"}, "acme/qwen-sql-lora"},
		{"sglang", Spec{Runtime: "sglang", Model: "acme/qwen-sql-lora", Port: 30000, Adapter: lora},
			[]string{"python3", "-m", "sglang.launch_server", "--model-path=Qwen/Qwen2.5-7B-Instruct", "--host=127.0.0.1", "--port=30000",
				"--served-model-name=Qwen/Qwen2.5-7B-Instruct", "--enable-metrics", "--lora-paths=adapter=/adapters/sql"}, "Qwen/Qwen2.5-7B-Instruct:adapter"},
		{"llama.cpp", Spec{Runtime: "llama-cpp", Model: "acme/qwen-sql-lora", ModelPath: "/models/qwen.gguf", Port: 8080,
			Adapter: &Adapter{Base: "Qwen/Qwen2.5-7B-Instruct", Path: "/adapters/sql.gguf"}},
			[]string{"llama-server", "-m", "/models/qwen.gguf", "--host", "127.0.0.1", "--port", "8080", "--alias", "acme/qwen-sql-lora", "--metrics",
				"--lora", "/adapters/sql.gguf"}, "acme/qwen-sql-lora"},
	}
	for _, tc := range tests {
		p, err := Render(tc.spec)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(p.Argv, tc.argv) || p.RequestModel != tc.requestModel {
			t.Errorf("%s:\n got %q, requests %q\nwant %q, requests %q", tc.name, p.Argv, p.RequestModel, tc.argv, tc.requestModel)
		}
	}
	for _, rt := range []string{"tgi", "ollama"} {
		_, err := Render(Spec{Runtime: rt, Model: "acme/qwen-sql-lora", ModelPath: "/models/qwen.gguf", Port: 8000, Adapter: lora})
		if err == nil || !strings.Contains(err.Error(), rt+` cannot serve "acme/qwen-sql-lora": it is a LoRA adapter of "Qwen/Qwen2.5-7B-Instruct"`) ||
			!strings.Contains(err.Error(), "vllm (--enable-lora --lora-modules), sglang (--lora-paths) and llama-cpp (--lora)") {
			t.Errorf("%s with an adapter: %v", rt, err)
		}
	}
	// A runtime of the user's own takes no adapter either.
	if _, err := Render(Spec{Runtime: "my-server", Command: Argv{"my-server"}, Model: "a", Port: 8000, Adapter: lora}); err == nil {
		t.Error("a custom runtime took an adapter")
	}
	// Values read as options, or missing, are refused before anything runs.
	for _, a := range []*Adapter{{Base: "--trust-remote-code", Path: "/a"}, {Base: "b", Path: "--x"}, {Base: "", Path: "/a"}, {Base: "b", Path: ""}} {
		if _, err := Render(Spec{Runtime: "vllm", Model: "m", Port: 8000, Adapter: a}); err == nil {
			t.Errorf("adapter %+v accepted", *a)
		}
	}
	// Without an adapter the LoRA arguments never appear.
	if p, err := Render(Spec{Runtime: "vllm", Model: "m", Port: 8000}); err != nil || slices.Contains(p.Argv, "--enable-lora") || p.RequestModel != "" {
		t.Errorf("no adapter: %q %v", p.Argv, err)
	}
}

// TestRenderEngineSettings: a job's engine settings reach the command line
// as the table's flags after the template's own arguments (Ollama's as its
// environment), and a setting the table does not hold refuses the launch.
func TestRenderEngineSettings(t *testing.T) {
	t.Parallel()
	p, err := Render(Spec{Runtime: "vllm", Model: "m", Port: 8000, ExtraArgs: Argv{"--seed", "1"},
		Engine: jobs.Engine{"max_num_seqs": "2", "tensor_parallel_size": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"vllm", "serve", "m", "--host=127.0.0.1", "--port=8000", "--served-model-name=m", "--seed", "1",
		"--max-num-seqs=2", "--tensor-parallel-size=2"}
	if !slices.Equal(p.Argv, want) {
		t.Errorf("argv %q, want %q", p.Argv, want)
	}
	p, err = Render(Spec{Runtime: "ollama", Model: "m", Port: 8000, Engine: jobs.Engine{"num_parallel": "4"}})
	if err != nil || !slices.Contains(p.Env, "OLLAMA_NUM_PARALLEL=4") || slices.Contains(p.Argv, "4") {
		t.Errorf("ollama: env %q argv %q err %v", p.Env, p.Argv, err)
	}
	for _, s := range []Spec{
		{Runtime: "vllm", Model: "m", Port: 8000, Engine: jobs.Engine{"max_num_seqs": "--trust-remote-code"}},
		{Runtime: "vllm", Model: "m", Port: 8000, Engine: jobs.Engine{"num_parallel": "4"}},
		{Runtime: "my-server", Command: Argv{"srv"}, Model: "m", Port: 8000, Engine: jobs.Engine{"max_num_seqs": "4"}},
	} {
		if p, err := Render(s); err == nil {
			t.Errorf("%v rendered: %q", s.Engine, p.Argv)
		}
	}
}
