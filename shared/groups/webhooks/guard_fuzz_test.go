package webhooks_test

import (
	"context"
	"net/netip"
	"net/url"
	"strconv"
	"testing"

	"platformapi/shared/groups/webhooks"
)

// FuzzCheckURL: any string is judged without panicking, and an accepted
// URL is https, without credentials or fragment, on an allowed port, and
// (for an address literal) a public address the dialler also accepts: what
// passes at creation also passes at connection.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{publicHost, "https://93.184.216.34:8443/x", "https://[2002:7f00:1::1]/", "https://[64:ff9b::a9fe:a9fe]:443/",
		"https://hooks.example.com:22/", "http://hooks.example.com/", "https://u@hooks.example.com/", "https://[fe80::1%25eth0]/", "https://0x7f.1/"} {
		f.Add(s)
	}
	g := webhooks.Guard{Resolver: resolver}
	f.Fuzz(func(t *testing.T, raw string) {
		if err := g.CheckURL(context.Background(), raw, "body.url"); err != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.User != nil || u.Fragment != "" {
			t.Fatalf("accepted %q (%v)", raw, err)
		}
		port := uint16(443)
		if p := u.Port(); p != "" {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || !webhooks.PortAllowed(uint16(n)) {
				t.Fatalf("accepted %q with port %q", raw, p)
			}
			port = uint16(n)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			if err := g.Control("tcp", netip.AddrPortFrom(a.WithZone(""), port).String(), nil); err != nil {
				t.Fatalf("accepted %q at creation, refused at dial: %v", raw, err)
			}
		}
	})
}

// FuzzRefusedReason: for every address, the dial check agrees with
// RefusedReason, and an IPv4 address is judged alike in every IPv6 form that
// carries it (mapped, NAT64, 6to4).
func FuzzRefusedReason(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{169, 254, 169, 254})
	f.Add([]byte{93, 184, 216, 34})
	f.Add(netip.MustParseAddr("2001:0:4136:e378:8000:63bf:80ff:fffe").AsSlice())
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		why := webhooks.RefusedReason(a)
		err := webhooks.Guard{}.Control("tcp", netip.AddrPortFrom(a, 443).String(), nil)
		if (why == "") != (err == nil) {
			t.Fatalf("%s: reason %q but dial %v", a, why, err)
		}
		if !a.Is4() {
			return
		}
		v4 := a.As4()
		forms := map[string]netip.Addr{"mapped": netip.AddrFrom16(netip.AddrFrom4(v4).As16())}
		nat64 := netip.MustParseAddr("64:ff9b::").As16()
		copy(nat64[12:], v4[:])
		forms["NAT64"] = netip.AddrFrom16(nat64)
		six := netip.MustParseAddr("2002::").As16()
		copy(six[2:6], v4[:])
		forms["6to4"] = netip.AddrFrom16(six)
		for name, v6 := range forms {
			if (webhooks.RefusedReason(v6) == "") != (why == "") {
				t.Fatalf("%s is %q but its %s form %s is %q", a, why, name, v6, webhooks.RefusedReason(v6))
			}
		}
	})
}
