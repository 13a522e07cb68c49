//go:build unix

package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary is its own fake runtime: run with fakeEnv=1 it does what
// its arguments say instead of running tests.
//
//	fake --host H --port P [--delay D] [--exit-code N] [--ignore-term] [--grandchild]
//	    a runtime answering /health 503 until D after its start, then 200
//	serve                    Ollama-like server on $OLLAMA_HOST
//	create NAME -f FILE      Ollama-like client registering NAME
//	sleeper                  ignores SIGTERM and sleeps (a grandchild)
const fakeEnv = "LAUNCH_FAKE_RUNTIME"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		os.Exit(fakeMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "fake: no mode")
		return 2
	}
	switch args[0] {
	case "fake":
		return fakeRuntime(args[1:])
	case "serve":
		return fakeOllamaServe()
	case "create":
		return fakeOllamaCreate(args[1:])
	case "sleeper":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("sleeper ready")
		time.Sleep(time.Hour) // blocks until killed; not synchronisation
		return 0
	}
	fmt.Fprintf(os.Stderr, "fake: unknown mode %q\n", args[0])
	return 2
}

func fakeRuntime(args []string) int {
	start := time.Now()
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	host := fs.String("host", "127.0.0.1", "")
	port := fs.Int("port", 0, "")
	delay := fs.Duration("delay", 0, "")
	exitCode := fs.Int("exit-code", -1, "")
	ignoreTerm := fs.Bool("ignore-term", false, "")
	grandchild := fs.Bool("grandchild", false, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fmt.Println("fake: loading weights")
	if *exitCode >= 0 {
		fmt.Fprintln(os.Stderr, "fake: CUDA out of memory")
		return *exitCode
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if *grandchild {
		self, _ := os.Executable()
		cmd := exec.Command(self, "sleeper")
		out, err := cmd.StdoutPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			return 1
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			return 1
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "sleeper ready" {
			fmt.Fprintf(os.Stderr, "fake: sleeper said %q\n", line)
			return 1
		}
		fmt.Printf("fake: grandchild pid=%d\n", cmd.Process.Pid)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) < *delay {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "vllm:num_requests_running 0")
	})
	return fakeListen(net.JoinHostPort(*host, fmt.Sprint(*port)), mux)
}

func fakeListen(addr string, h http.Handler) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 1
	}
	fmt.Println("fake: listening on", ln.Addr())
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
	}
	return 1
}

// fakeOllamaServe keeps a set of created models (name → FROM path) and
// which of them were loaded; /fake/state shows both.
func fakeOllamaServe() int {
	var (
		mu      sync.Mutex
		created = map[string]string{}
		loaded  = map[string]bool{}
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"version":"0.0.0-fake"}`)
	})
	mux.HandleFunc("POST /api/create", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model, From string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			http.Error(w, "bad create", http.StatusBadRequest)
			return
		}
		mu.Lock()
		created[req.Model] = req.From
		mu.Unlock()
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		type model struct {
			ID string `json:"id"`
		}
		list := struct {
			Data []model `json:"data"`
		}{Data: []model{}}
		for name := range created {
			list.Data = append(list.Data, model{name + ":latest"})
		}
		_ = json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("POST /api/generate", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		defer mu.Unlock()
		if _, ok := created[req.Model]; !ok {
			http.Error(w, `{"error":"model not found"}`, http.StatusNotFound)
			return
		}
		loaded[req.Model] = true
		fmt.Fprintln(w, `{"done":true,"done_reason":"load"}`)
	})
	mux.HandleFunc("GET /fake/state", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"created": created, "loaded": loaded,
			"keep_alive": os.Getenv("OLLAMA_KEEP_ALIVE")})
	})
	return fakeListen(os.Getenv("OLLAMA_HOST"), mux)
}

// fakeOllamaCreate parses its arguments as ollama's (cobra's) parser does:
// -f/--file with its value after "=" or as the next argument, and after
// "--" only positionals; exactly one positional, the model's name.
func fakeOllamaCreate(args []string) int {
	var file string
	var names []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			names = append(names, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "-f="):
			_, file, _ = strings.Cut(a, "=")
		case (a == "--file" || a == "-f") && i+1 < len(args):
			i++
			file = args[i]
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(os.Stderr, "fake create: unknown flag: %s\n", a)
			return 2
		default:
			names = append(names, a)
		}
	}
	if len(names) != 1 || file == "" {
		fmt.Fprintf(os.Stderr, "fake create: usage: create [--file FILE] NAME, got %q\n", args)
		return 2
	}
	args = []string{names[0], "-f", file}
	mf, err := os.ReadFile(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake create:", err)
		return 1
	}
	from, ok := strings.CutPrefix(strings.TrimSpace(string(mf)), "FROM ")
	if !ok {
		fmt.Fprintf(os.Stderr, "fake create: Modelfile %q has no FROM\n", mf)
		return 1
	}
	body, _ := json.Marshal(map[string]string{"model": args[0], "from": from})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+os.Getenv("OLLAMA_HOST")+"/api/create", strings.NewReader(string(body)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake create:", err)
		return 1
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "fake create:", res.Status)
		return 1
	}
	fmt.Println("success")
	return 0
}
