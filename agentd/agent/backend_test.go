package agent

import (
	"net"
	"os"
	"testing"
)

// A runtime already running on this node is gray-box even without
// /metrics or GPUs; a remote one is black-box unless one of those adds to
// what the agent sees.
func TestEndpointModes(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	local := []string{"http://127.0.0.1:11434", "http://localhost:8000/v1", "https://[::1]:8443", "http://127.0.0.2:80", "http://LOCALHOST.:9"}
	if host != "" {
		local = append(local, "http://"+host+":8000")
	}
	// One of this machine's own (non-loopback) addresses, when it has one.
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				local = append(local, "http://"+n.IP.String()+":8000")
				break
			}
		}
	}
	for _, u := range local {
		if got := (&remote{mode: "black-box", url: u}).Mode(false); got != "gray-box" {
			t.Errorf("%s: %s, want gray-box", u, got)
		}
	}
	for _, u := range []string{"https://api.example.com/v1", "http://192.0.2.7:8000", "http://[2001:db8::1]:80", "not a url\x7f"} {
		if got := (&remote{mode: "black-box", url: u}).Mode(false); got != "black-box" {
			t.Errorf("%s: %s, want black-box", u, got)
		}
		if got := (&remote{mode: "black-box", url: u, metrics: u + "/metrics"}).Mode(false); got != "gray-box" {
			t.Errorf("%s with /metrics: %s, want gray-box", u, got)
		}
		if got := (&remote{mode: "black-box", url: u}).Mode(true); got != "gray-box" {
			t.Errorf("%s with local GPUs: %s, want gray-box", u, got)
		}
	}
	if got := (&remote{mode: "sim", url: "http://127.0.0.1:1"}).Mode(true); got != "sim" {
		t.Errorf("the simulated runtime is %s, want sim", got)
	}
}
