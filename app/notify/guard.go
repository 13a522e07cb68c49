package notify

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/valid"
)

// reserved are ranges a webhook may not reach besides those netip names
// (loopback, private, link-local, multicast, unspecified): shared address
// space (carrier-grade NAT), "this network", benchmarking, reserved, and
// NAT64 (which can lead to any IPv4 address, private ones included).
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// Guard decides which addresses a webhook delivery may connect to: no
// loopback, link-local, private or otherwise internal address, unless an
// operator allows its network (RUCKUS_WEBHOOK_ALLOWED_NETWORKS). The check
// is made on the address actually connected to, after DNS, so a name that
// resolves (or re-resolves) to an internal address is refused too.
type Guard struct {
	Allowed []netip.Prefix
}

// ErrBlocked: the address is internal and not allowed.
var ErrBlocked = errors.New("webhooks may not reach this address")

// Check refuses an internal address that no allowed network contains.
func (g Guard) Check(ip netip.Addr) error {
	ip = ip.Unmap()
	for _, p := range g.Allowed {
		if p.Contains(ip) {
			return nil
		}
	}
	kind := ""
	switch {
	case !ip.IsValid():
		kind = "an invalid"
	case ip.IsLoopback():
		kind = "a loopback"
	case ip.IsPrivate():
		kind = "a private"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		kind = "a link-local"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		kind = "a multicast"
	case ip.IsUnspecified():
		kind = "an unspecified"
	default:
		for _, p := range reserved {
			if p.Contains(ip) {
				kind = "a reserved"
			}
		}
	}
	if kind == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is %s address (RUCKUS_WEBHOOK_ALLOWED_NETWORKS may allow its network)", ErrBlocked, ip, kind)
}

// Client is the HTTP client deliveries are sent with: every connection is
// checked by Check at connect time, no proxy from the environment (it
// would be the address checked), redirects are not followed.
func (g Guard) Client(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: timeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%w: %q is not an address", ErrBlocked, host)
		}
		return g.Check(ip)
	}}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// CheckURL says what is wrong with a webhook's URL, or nil: an http or
// https URL with a host, no user name or password in it, at most 2,048
// bytes; a host written as an address must be one Check allows (a name is
// checked when a delivery connects).
func (g Guard) CheckURL(raw string) error {
	if len(raw) > 2048 {
		return i18n.NewError("notify_url.too_long")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "":
		return i18n.NewError("notify_url.scheme")
	case u.User != nil:
		return i18n.NewError("notify_url.userinfo")
	case !valid.IsHTTPURL(raw) || strings.ContainsAny(raw, " \t\r\n"):
		return i18n.NewError("notify_url.spaces")
	case u.Fragment != "":
		return i18n.NewError("notify_url.fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return i18n.NewError("notify_url.port", "Port", fmt.Sprintf("%q", p))
		}
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if err := g.Check(ip); err != nil {
			return i18n.NewError("notify_url.blocked", "Reason", err.Error())
		}
	}
	return nil
}

func parsePort(p string) (int, error) {
	n := 0
	for _, r := range p {
		if r < '0' || r > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(r-'0')
		if n > 65535 {
			return 0, errors.New("too large")
		}
	}
	return n, nil
}
