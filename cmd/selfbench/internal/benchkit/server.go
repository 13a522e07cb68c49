package benchkit

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/ruckus/ruckus/app/devdb"
)

// FreeAddr is a loopback address with a port free at the time of asking.
func FreeAddr() (string, error) {
	port, err := devdb.FreePort()
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(port), nil
}

// Server is a `ruckus serve` child process on a loopback port.
type Server struct {
	*Proc
	Base string // http://127.0.0.1:PORT
}

// StartServer starts `ruckus serve` (the binary at ruckus) on a free
// loopback port with env added to this process's environment (the
// database is DATABASE_URL's), its messages to stderr, and waits until
// /readyz answers 200.
func StartServer(ctx context.Context, ruckus string, env ...string) (*Server, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := Start(Spec{Name: "ruckus serve", Argv: []string{ruckus, "serve"},
		Env: append([]string{"RUCKUS_ADDR=" + addr, "RUCKUS_LOG_LEVEL=warn"}, env...), Stderr: os.Stderr})
	if err != nil {
		return nil, err
	}
	s := &Server{Proc: p, Base: "http://" + addr}
	if err := WaitHTTP(ctx, p, s.Base+"/readyz", 30*time.Second); err != nil {
		_ = p.Stop(10 * time.Second)
		return nil, err
	}
	return s, nil
}

// WaitHTTP waits up to limit for url to answer 200.
func WaitHTTP(ctx context.Context, p *Proc, url string, limit time.Duration) error {
	return WaitFor(ctx, p, limit, 100*time.Millisecond, url+" to answer 200", func() (bool, error) {
		res, err := http.Get(url)
		if err != nil {
			return false, nil
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK, nil
	})
}
