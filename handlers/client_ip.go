package handlers

import (
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// maxForwardedHops bounds how many X-Forwarded-For entries are read.
const maxForwardedHops = 32

// clientIP is the address of the client a request comes from. From a
// trusted proxy (TrustedProxies) it is the right-most X-Forwarded-For
// entry that is not itself a trusted proxy: each proxy appends the address
// it got the request from, so entries left of that were written by the
// client and prove nothing. Every X-Forwarded-For line counts, in order, as
// one list: a proxy may append its entry as a line of its own after the
// client's, and reading the first line alone would key on what the client
// wrote. From any other peer it is the peer's own address, whatever
// headers say.
func (s *server) clientIP(c *fiber.Ctx) string {
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		return c.Context().RemoteIP().String()
	}
	peer = peer.Unmap()
	if !s.trusted(peer) {
		return peer.String()
	}
	hops := forwardedHops(c)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // unreadable: stop at the last address we could trust
		}
		client = a.Unmap()
		if !s.trusted(client) {
			break
		}
	}
	return client.String()
}

// forwardedHops is the entries of every X-Forwarded-For line of the
// request, first line first, at most the last maxForwardedHops of them.
func forwardedHops(c *fiber.Ctx) []string {
	var hops []string
	for _, line := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		hops = append(hops, strings.Split(string(line), ",")...)
		if len(hops) > maxForwardedHops {
			hops = hops[len(hops)-maxForwardedHops:]
		}
	}
	return hops
}

func (s *server) trusted(a netip.Addr) bool {
	for _, p := range s.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR
// ranges (RUCKUS_TRUSTED_PROXIES), such as "10.0.0.0/8, 127.0.0.1".
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, err
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
