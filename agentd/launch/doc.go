// Package launch is agentd's white-box mode: it starts an inference runtime
// (vLLM, SGLang, TGI, llama.cpp's llama-server, Ollama) from a command
// template, waits until it serves the model, measures the model load time,
// keeps its log, and stops it afterwards.
//
// # Templates
//
// Each shipped runtime has a Template (see Lookup and Runtimes): an argv in
// which every argument is a text/template rendered against Vars, never
// joined into a shell command line; environment additions; the HTTP path
// that answers 2xx once the server is up; whether it serves Prometheus
// metrics; and the root of its OpenAI-compatible API. A Spec may replace the
// argv (Spec.Command, a list or one string split like a shell would, without
// any expansion), append arguments (Spec.ExtraArgs), add environment
// (Spec.Env) or bring a whole Template of its own. An argument that renders
// to the empty string is dropped, so a template can make a flag optional.
//
// # Values on the command line
//
// The model name comes from the job, so from the database, which a GPU node
// does not trust; paths come from the agent's settings. Neither may be read
// by a runtime as anything but the value it is: Start and Render refuse a
// model name, model path or Modelfile that begins with "-", holds a control
// character (a line break would add a line to the Modelfile written from
// the path) or is not UTF-8, and the shipped templates pass values as
// --flag=value where the runtime's parser takes that form, as the argument
// after a flag that always takes the next one (llama-server), or after
// "--" (ollama create). agentd also refuses, before anything else, a job
// whose model is not a registry model id (jobs.CheckModelName).
//
// # Readiness and load time
//
// WaitReady goes through up to four phases, all within Spec.ReadyTimeout
// counted from the moment the process was started:
//
//  1. poll the template's ready path until it answers 2xx (vLLM, SGLang,
//     TGI, llama-server: /health, which llama-server answers with 503 while
//     it loads; Ollama: /api/version);
//  2. run the template's prepare steps, commands that need the server up
//     (Ollama: `ollama create MODEL -f Modelfile`, only when a Modelfile is
//     given or one can be written from Spec.ModelPath; otherwise the model
//     must already be in Ollama's store);
//  3. poll the models path until the served model is listed (Ollama:
//     GET /v1/models);
//  4. send the template's load request once (Ollama loads weights lazily at
//     the first request; POST /api/generate with only the model makes it
//     load them now, so the first benchmark request does not pay for it).
//
// The load time is the monotonic time from starting the process to the end
// of the last phase. WaitReady fails early, with the exit status and the
// tail of the log, when the process exits, and with ErrReadyTimeout when the
// deadline passes.
//
// # Process handling
//
// The runtime runs in its own process group, so Stop reaches the workers it
// forks too: SIGTERM to the group, up to a grace period for the group to
// go, then SIGKILL. On Linux the runtime also gets SIGTERM when agentd dies
// (the parent-death signal), so a crashed agent does not leave a server
// holding GPU memory. Output (stdout and stderr interleaved) goes to
// Spec.LogPath and to an in-memory ring of the last bytes (LogTail) that
// the agent stores with the run.
//
// A free port picked for Spec.Port 0 is free when picked; another program
// may take it before the runtime binds it, in which case the runtime exits
// and WaitReady says so.
package launch
