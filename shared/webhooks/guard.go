package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"platformapi/shared/apierr"
)

// MaxURLLength bounds a webhook URL.
const MaxURLLength = 2048

// lookupTimeout bounds the DNS resolution of a URL's host at creation.
const lookupTimeout = 5 * time.Second

// refused are the address ranges a webhook may never reach: anything that is
// not the public internet, where a request from inside the deployment could
// touch the account's own network, the instance metadata service or a
// neighbour. IPv4-mapped IPv6 addresses are unmapped before the check, so
// ::ffff:10.0.0.1 is refused as 10.0.0.1.
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
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// RefusedReason says why addr may not be reached, or "" when it may.
func RefusedReason(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	for _, r := range refused {
		if r.prefix.Contains(addr) {
			return r.why
		}
	}
	return ""
}

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

// CheckURL validates a webhook URL: https (http only when private addresses
// are allowed), no userinfo, no fragment, at most MaxURLLength characters,
// and a host whose every address is public. Errors are validation_failed
// pointing at location.
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
		return bad("must use https")
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
	addrs, err := g.resolve(ctx, u.Hostname())
	if err != nil {
		return bad("host %s does not resolve", u.Hostname())
	}
	for _, a := range addrs {
		if why := RefusedReason(a); why != "" {
			return bad("host %s resolves to a %s address; webhooks reach public addresses only", u.Hostname(), why)
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
// refused address. It runs on the address actually dialled, after DNS
// resolution, so a name that resolved to a public address at creation and
// to a private one now (DNS rebinding) is still refused.
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
	return nil
}
