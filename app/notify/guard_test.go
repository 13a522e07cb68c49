package notify_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/valid"
)

func TestGuardRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	g := notify.Guard{}
	for addr, want := range map[string]string{
		"127.0.0.1": "loopback", "::1": "loopback", "10.0.0.1": "private", "172.16.5.4": "private", "192.168.1.1": "private",
		"fd00::1": "private", "169.254.169.254": "link-local", "fe80::1": "link-local", "224.0.0.1": "link-local", "239.1.1.1": "multicast",
		"0.0.0.0": "unspecified", "::": "unspecified", "100.64.0.1": "reserved", "198.18.0.1": "reserved",
		"240.0.0.1": "reserved", "64:ff9b::a00:1": "reserved", "::ffff:127.0.0.1": "loopback",
		"93.184.215.14": "", "2606:4700::1111": "", "8.8.8.8": "",
	} {
		err := g.Check(netip.MustParseAddr(addr))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s refused: %v", addr, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), " "+want+" address")):
			t.Errorf("%s: %v, want a %s refusal", addr, err, want)
		}
	}
	allowed := notify.Guard{Allowed: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}
	if allowed.Check(netip.MustParseAddr("10.1.2.3")) != nil || allowed.Check(netip.MustParseAddr("10.2.0.1")) == nil {
		t.Fatal("an allowed network is not allowed alone")
	}
}

// FuzzCheckURL: whatever the URL, CheckURL does not panic, and what it
// accepts is an http(s) URL with a host and no credentials, short enough
// for the database.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://example.com/hook", "http://127.0.0.1/", "http://u:p@x/", "ftp://x", "http://[::1]:80/", "https://x:0/", "http://%zz", "https://exa mple.com"} {
		f.Add(s)
	}
	g := notify.Guard{}
	f.Fuzz(func(t *testing.T, s string) {
		if err := g.CheckURL(s); err == nil && (!valid.IsHTTPURL(s) || len(s) > 2048) {
			t.Fatalf("accepted %q", s)
		}
	})
}
