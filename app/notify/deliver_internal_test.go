package notify

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
)

// A webhook's last error names the failure, never the server's resolver.
func TestDeliveryFailureNamesNoResolver(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dns  net.DNSError
		want string
	}{
		{net.DNSError{Err: "no such host", Name: "hooks.example.invalid", Server: "10.9.8.7:53", IsNotFound: true}, "the host name hooks.example.invalid does not resolve"},
		{net.DNSError{Err: "i/o timeout", Name: "slow.example", Server: "10.9.8.7:53", IsTimeout: true}, "looking up the host name slow.example timed out"},
		{net.DNSError{Err: "server misbehaving", Name: "odd.example", Server: "10.9.8.7:53"}, "the host name odd.example could not be looked up"},
	} {
		err := &url.Error{Op: "Post", URL: "https://" + c.dns.Name + "/hook", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &c.dns}}
		if !strings.Contains(err.Error(), "10.9.8.7") {
			t.Fatalf("the test's error does not show the resolver: %v", err)
		}
		got := failure(err)
		if got != c.want || strings.Contains(got, "10.9.8.7") {
			t.Errorf("%v: %q, want %q", err, got, c.want)
		}
	}
	if got := failure(errors.New("the receiver answered 500 Internal Server Error")); got != "the receiver answered 500 Internal Server Error" {
		t.Errorf("another failure: %q", got)
	}
}
