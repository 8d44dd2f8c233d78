package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"platformapi/shared/base/apierr"
)

// MaxURLLength bounds a webhook URL.
const MaxURLLength = 2048

// lookupTimeout bounds the DNS resolution of a URL's host at creation.
const lookupTimeout = 5 * time.Second

// refused are the address ranges a webhook may never reach: anything that is
// not the public internet, where a request from inside the deployment could
// touch the account's own network, the instance metadata service or a
// neighbour. IPv4-mapped IPv6 addresses are unmapped before the check, so
// ::ffff:10.0.0.1 is refused as 10.0.0.1; IPv6 forms that carry an IPv4
// address (IPv4-translated, 6to4, NAT64, Teredo) are judged by that address
// too (embedded): a host that routes them would deliver to the IPv4 one.
var refused = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	// RFC 8215 local-use NAT64: not globally reachable, and its operator
	// chooses where the IPv4 address sits, so it cannot be decoded safely.
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// IPv6 ranges whose addresses carry an IPv4 address.
var (
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 SIIT: bits 96-127
	sixToFour  = netip.MustParsePrefix("2002::/16")       // RFC 3056: bits 16-47
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052: bits 96-127
	teredo     = netip.MustParsePrefix("2001::/32")       // RFC 4380: server bits 32-63, client ^ bits 96-127
)

// embedded lists the IPv4 addresses an IPv6 address carries, with the name
// of the form. A Teredo address is judged by both its server and its client.
func embedded(a netip.Addr) (form string, v4 []netip.Addr) {
	b := a.As16()
	at := func(i ...int) netip.Addr { return netip.AddrFrom4([4]byte{b[i[0]], b[i[1]], b[i[2]], b[i[3]]}) }
	switch {
	case translated.Contains(a):
		return "SIIT IPv4-translated", []netip.Addr{at(12, 13, 14, 15)}
	case sixToFour.Contains(a):
		return "6to4", []netip.Addr{at(2, 3, 4, 5)}
	case nat64.Contains(a):
		return "NAT64", []netip.Addr{at(12, 13, 14, 15)}
	case teredo.Contains(a):
		return "Teredo", []netip.Addr{at(4, 5, 6, 7), netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})}
	}
	return "", nil
}

// RefusedReason says why addr may not be reached, or "" when it may.
func RefusedReason(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	for _, r := range refused {
		if r.prefix.Contains(addr) {
			return r.why
		}
	}
	if form, v4s := embedded(addr); form != "" {
		for _, v4 := range v4s {
			if why := RefusedReason(v4); why != "" {
				return fmt.Sprintf("%s (%s embedded in a %s address)", why, v4, form)
			}
		}
	}
	return ""
}

// PortAllowed reports whether a webhook may be delivered to port: 443 or an
// unprivileged port (1024-65535). The privileged ports below 1024 are where
// SSH, SMTP, DNS and other non-HTTP services listen; a webhook POST there is
// at best an error and at worst protocol smuggling.
func PortAllowed(port uint16) bool { return port == 443 || port >= 1024 }

// Resolver looks up a host's addresses; *net.Resolver is one, tests fake it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard enforces the URL rules at creation and the address rules at every
// connection. AllowPrivate lifts the address rules (and allows http) for
// local development only.
type Guard struct {
	AllowPrivate bool
	Resolver     Resolver // nil: net.DefaultResolver
}

// localHint tells a developer whose receiver runs on their own machine the
// one switch that allows it, since nothing else in the refusal points there.
const localHint = " (a receiver on your own machine: start the server with ALLOW_PRIVATE_WEBHOOKS=true, for development only)"

// CheckURL validates a webhook URL: https (http only when private addresses
// are allowed), no userinfo, no fragment, at most MaxURLLength characters,
// an allowed port (see PortAllowed; lifted with the address rules) and a
// host whose every address is public. Errors are validation_failed pointing
// at location.
func (g Guard) CheckURL(ctx context.Context, raw, location string) error {
	bad := func(msg string, args ...any) error {
		return apierr.Invalid("Invalid webhook URL.", apierr.Field(location, msg, args...))
	}
	if len(raw) > MaxURLLength {
		return bad("at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return bad("must be an absolute https URL")
	}
	switch {
	case u.Scheme == "http" && !g.AllowPrivate:
		return bad("must use https%s", localHint)
	case u.Scheme != "https" && u.Scheme != "http":
		return bad("must use https")
	case u.User != nil:
		return bad("must not carry a user name or password")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("must not carry a fragment")
	}
	if g.AllowPrivate {
		return nil
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || !PortAllowed(uint16(n)) {
			return bad("port %s is not allowed; webhooks reach port 443 or 1024-65535 only", p)
		}
	}
	addrs, err := g.resolve(ctx, u.Hostname())
	if err != nil {
		return bad("host %s does not resolve", u.Hostname())
	}
	for _, a := range addrs {
		if why := RefusedReason(a); why != "" {
			return bad("host %s resolves to a %s address; webhooks reach public addresses only%s", u.Hostname(), why, localHint)
		}
	}
	return nil
}

func (g Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no addresses")
	}
	return addrs, err
}

// ErrRefusedAddress is the dial error for a refused address.
var ErrRefusedAddress = errors.New("webhooks: refused address")

// Control is a net.Dialer Control function that refuses to connect to a
// refused address or port. It runs on the address actually dialled, after
// DNS resolution, so a name that resolved to a public address at creation
// and to a private one now (DNS rebinding) is still refused, and so is a
// webhook stored before the port rule existed.
func (g Guard) Control(_, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrRefusedAddress, address, err)
	}
	if why := RefusedReason(ap.Addr()); why != "" {
		return fmt.Errorf("%w: %s is a %s address", ErrRefusedAddress, ap.Addr(), why)
	}
	if !PortAllowed(ap.Port()) {
		return fmt.Errorf("%w: port %d is not 443 or 1024-65535", ErrRefusedAddress, ap.Port())
	}
	return nil
}
