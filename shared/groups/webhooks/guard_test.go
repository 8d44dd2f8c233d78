package webhooks_test

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/webhooks"
)

// Every range that is not the public internet is refused, including its
// IPv4-mapped IPv6 form, which a naive check of the IPv4 ranges would miss.
func TestNonPublicAddressesAreRefused(t *testing.T) {
	for _, tc := range []struct{ addr, why string }{
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fc00::1", "unique-local"},
		{"fd12:3456::1", "unique-local"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.127.255.254", "carrier-grade NAT"},
		{"255.255.255.255", "reserved"},
		{"198.18.0.1", "benchmarking"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:100.64.0.1", "carrier-grade NAT"},
		{"::ffff:192.168.0.1", "private"},
		{"::127.0.0.1", "IPv4-compatible"},
		{"64:ff9b::a00:1", "private (10.0.0.1 embedded in a NAT64 address)"},
		{"192.0.2.1", "documentation"},
		{"2001:db8::1", "documentation"},
		{"fec0::1", "site-local"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			if got := webhooks.RefusedReason(netip.MustParseAddr(tc.addr)); got != tc.why {
				t.Fatalf("RefusedReason(%s) = %q, want %q", tc.addr, got, tc.why)
			}
			err := webhooks.Guard{}.Control("tcp", netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 443).String(), nil)
			if !errors.Is(err, webhooks.ErrRefusedAddress) {
				t.Fatalf("dialling %s: %v, want ErrRefusedAddress", tc.addr, err)
			}
		})
	}
}

// An IPv6 address that carries an IPv4 address (6to4,
// NAT64, Teredo, mapped) is refused when the IPv4 address would be; the
// local-use NAT64 prefix, whose layout is not fixed, is refused outright.
func TestEmbeddedIPv4AddressesAreJudgedAsIPv4(t *testing.T) {
	for _, tc := range []struct{ addr, why string }{
		{"2002:7f00:1::1", "loopback (127.0.0.1 embedded in a 6to4 address)"},
		{"2002:a9fe:a9fe::", "link-local (169.254.169.254 embedded in a 6to4 address)"},
		{"2002:c0a8:101:0:1:2:3:4", "private (192.168.1.1 embedded in a 6to4 address)"},
		{"64:ff9b::7f00:1", "loopback (127.0.0.1 embedded in a NAT64 address)"},
		{"64:ff9b::169.254.169.254", "link-local (169.254.169.254 embedded in a NAT64 address)"},
		{"64:ff9b:1::a9fe:a9fe", "local-use NAT64"},
		{"64:ff9b:1:7f00:1::", "local-use NAT64"},
		{"64:ff9b:1::5db8:d822", "local-use NAT64"},
		// Teredo: server 65.54.227.120, client 127.0.0.1 stored inverted.
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback (127.0.0.1 embedded in a Teredo address)"},
		{"2001:0:4136:e378:8000:63bf:5601:5601", "link-local (169.254.169.254 embedded in a Teredo address)"},
		// Teredo with a private server.
		{"2001:0:a00:1:8000:63bf:a2c9:d7dd", "private (10.0.0.1 embedded in a Teredo address)"},
		{"::ffff:7f00:1", "loopback"},
		{"::ffff:a9fe:a9fe", "link-local"},
		{"::169.254.169.254", "IPv4-compatible"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			if got := webhooks.RefusedReason(a); got != tc.why {
				t.Fatalf("RefusedReason(%s) = %q, want %q", tc.addr, got, tc.why)
			}
			if err := (webhooks.Guard{}).Control("tcp", netip.AddrPortFrom(a, 443).String(), nil); !errors.Is(err, webhooks.ErrRefusedAddress) {
				t.Fatalf("dialling %s: %v, want ErrRefusedAddress", tc.addr, err)
			}
			err := webhooks.Guard{Resolver: resolver}.CheckURL(context.Background(), "https://["+tc.addr+"]/in", "body.url")
			if err == nil || !strings.Contains(err.(*apierr.Error).Errors[0].Message, tc.why) {
				t.Fatalf("creating a webhook for %s: %v, want refused as %s", tc.addr, err, tc.why)
			}
		})
	}
}

// Every IPv6 spelling of a non-public IPv4 address is
// refused as a webhook URL and at the dial, the IPv4-translated form
// (::ffff:0:a.b.c.d, RFC 2765) included.
func TestURLsEmbeddingANonPublicIPv4AreRefused(t *testing.T) {
	for _, tc := range []struct{ name, url, why string }{
		{"TranslatedMetadata", "https://[::ffff:0:a9fe:a9fe]/", "link-local (169.254.169.254 embedded in a SIIT IPv4-translated address)"},
		{"TranslatedLoopback", "https://[::ffff:0:127.0.0.1]/in", "loopback (127.0.0.1 embedded in a SIIT IPv4-translated address)"},
		{"TranslatedPrivate", "https://[::ffff:0:c0a8:101]:8443/in", "private (192.168.1.1 embedded in a SIIT IPv4-translated address)"},
		{"MappedMetadata", "https://[::ffff:a9fe:a9fe]/", "link-local"},
		{"MappedPrivate", "https://[::ffff:10.0.0.1]/", "private"},
		{"NAT64Metadata", "https://[64:ff9b::a9fe:a9fe]/", "link-local (169.254.169.254 embedded in a NAT64 address)"},
		{"NAT64Private", "https://[64:ff9b::172.16.0.1]/", "private (172.16.0.1 embedded in a NAT64 address)"},
		{"SixToFourMetadata", "https://[2002:a9fe:a9fe::1]/", "link-local (169.254.169.254 embedded in a 6to4 address)"},
		{"SixToFourPrivate", "https://[2002:ac10:1::]/", "private (172.16.0.1 embedded in a 6to4 address)"},
		{"TeredoClientLoopback", "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "loopback (127.0.0.1 embedded in a Teredo address)"},
		{"TeredoServerPrivate", "https://[2001:0:c0a8:101::1]/", "private (192.168.1.1 embedded in a Teredo address)"},
		{"CompatibleLoopback", "https://[::127.0.0.1]/", "IPv4-compatible"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhooks.Guard{Resolver: resolver}.CheckURL(context.Background(), tc.url, "body.url")
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.ValidationFailed || !strings.Contains(ae.Errors[0].Message, tc.why) {
				t.Fatalf("CheckURL(%s) = %v, want validation_failed naming %q", tc.url, err, tc.why)
			}
			u, _ := url.Parse(tc.url)
			a := netip.MustParseAddr(u.Hostname())
			if err := (webhooks.Guard{}).Control("tcp", netip.AddrPortFrom(a, 443).String(), nil); !errors.Is(err, webhooks.ErrRefusedAddress) {
				t.Fatalf("dialling %s: %v, want ErrRefusedAddress", a, err)
			}
		})
	}
}

// Only 443 and the unprivileged ports are reachable, at creation and at
// every connection.
func TestOnlyPort443AndUnprivilegedPortsAreAllowed(t *testing.T) {
	for _, tc := range []struct {
		port string
		ok   bool
	}{
		{"", true}, {"443", true}, {"1024", true}, {"8443", true}, {"65535", true},
		{"22", false}, {"25", false}, {"80", false}, {"0", false}, {"1023", false}, {"65536", false}, {"99999999999", false},
	} {
		t.Run("port "+tc.port, func(t *testing.T) {
			raw := "https://93.184.216.34/in"
			if tc.port != "" {
				raw = "https://93.184.216.34:" + tc.port + "/in"
			}
			err := webhooks.Guard{Resolver: resolver}.CheckURL(context.Background(), raw, "body.url")
			if tc.ok != (err == nil) {
				t.Fatalf("CheckURL(%s) = %v, want ok=%v", raw, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.(*apierr.Error).Errors[0].Message, "port "+tc.port+" is not allowed") {
				t.Fatalf("message %q does not name the port", err.(*apierr.Error).Errors[0].Message)
			}
			n, perr := strconv.ParseUint(tc.port, 10, 16)
			if tc.port == "" || perr != nil {
				return
			}
			derr := webhooks.Guard{}.Control("tcp", netip.AddrPortFrom(netip.MustParseAddr("93.184.216.34"), uint16(n)).String(), nil)
			if tc.ok != (derr == nil) {
				t.Fatalf("dialling port %s: %v, want ok=%v", tc.port, derr, tc.ok)
			}
		})
	}
}

func TestPublicAddressesAreAllowed(t *testing.T) {
	for _, a := range []string{"93.184.216.34", "8.8.8.8", "100.63.255.255", "100.128.0.1", "172.32.0.1", "2606:4700:4700::1111", "::ffff:93.184.216.34",
		"2002:5db8:d822::1", "64:ff9b::5db8:d822", "2001:0:4136:e378:8000:63bf:a247:27dd", "::ffff:0:5db8:d822"} {
		if why := webhooks.RefusedReason(netip.MustParseAddr(a)); why != "" {
			t.Errorf("%s refused as %s", a, why)
		}
		if err := (webhooks.Guard{}).Control("tcp", netip.AddrPortFrom(netip.MustParseAddr(a), 443).String(), nil); err != nil {
			t.Errorf("dialling %s: %v", a, err)
		}
	}
}

// The switch lifts the address rules at connection time too.
func TestAllowPrivateLetsLoopbackConnect(t *testing.T) {
	if err := (webhooks.Guard{AllowPrivate: true}).Control("tcp", "127.0.0.1:8080", nil); err != nil {
		t.Fatal(err)
	}
}

func TestURLRules(t *testing.T) {
	long := "https://hooks.example.com/" + strings.Repeat("a", webhooks.MaxURLLength)
	for _, tc := range []struct {
		name, url    string
		allowPrivate bool
		ok           bool
	}{
		{"HTTPSToAPublicHostIsAccepted", publicHost, false, true},
		{"HTTPSToAPublicLiteralIsAccepted", "https://93.184.216.34:8443/x?y=1", false, true},
		{"HTTPIsRefused", "http://hooks.example.com/in", false, false},
		{"HTTPIsAcceptedWithTheSwitch", "http://127.0.0.1:9/in", true, true},
		{"OtherSchemesAreRefused", "ftp://hooks.example.com/in", true, false},
		{"UserinfoIsRefused", "https://user:pass@hooks.example.com/in", false, false},
		{"UserinfoIsRefusedEvenWithTheSwitch", "https://user@127.0.0.1/in", true, false},
		{"FragmentIsRefused", "https://hooks.example.com/in#x", false, false},
		{"RelativeIsRefused", "/in", false, false},
		{"OpaqueIsRefused", "https:hooks.example.com", false, false},
		{"LongerThan2048IsRefused", long, false, false},
		{"LoopbackLiteralIsRefused", "https://127.0.0.1/in", false, false},
		{"IPv6LoopbackLiteralIsRefused", "https://[::1]/in", false, false},
		{"MappedLoopbackLiteralIsRefused", "https://[::ffff:127.0.0.1]/in", false, false},
		{"MetadataServiceIsRefused", "https://169.254.169.254/latest/meta-data/", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := webhooks.Guard{AllowPrivate: tc.allowPrivate, Resolver: resolver}
			err := g.CheckURL(context.Background(), tc.url, "body.url")
			if tc.ok != (err == nil) {
				t.Fatalf("CheckURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
			}
			var ae *apierr.Error
			if err != nil && (!errors.As(err, &ae) || ae.Code != apierr.ValidationFailed || ae.Errors[0].Location != "body.url") {
				t.Fatalf("error %v is not validation_failed at body.url", err)
			}
		})
	}
}

// A name is judged by every address it resolves to, so DNS cannot smuggle a
// private target past the literal-address check.
func TestNamesResolvingToRefusedAddressesAreRefused(t *testing.T) {
	r := fakeResolver{
		"internal.example":  {"10.0.0.5"},
		"metadata.example":  {"169.254.169.254"},
		"localhost.example": {"127.0.0.1", "::1"},
		"mapped.example":    {"::ffff:192.168.1.10"},
		"cgnat.example":     {"100.64.3.4"},
		"ula.example":       {"fd00::7"},
		"mixed.example":     {"93.184.216.34", "172.20.0.1"},
		"public.example":    {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	}
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"internal.example", false},
		{"metadata.example", false},
		{"localhost.example", false},
		{"mapped.example", false},
		{"cgnat.example", false},
		{"ula.example", false},
		{"mixed.example", false},
		{"unresolvable.example", false},
		{"public.example", true},
	} {
		t.Run(tc.host, func(t *testing.T) {
			err := webhooks.Guard{Resolver: r}.CheckURL(context.Background(), "https://"+tc.host+"/in", "body.url")
			if tc.ok != (err == nil) {
				t.Fatalf("CheckURL(%s) = %v, want ok=%v", tc.host, err, tc.ok)
			}
		})
	}
}

// A refusal that a local receiver meets (http, a private address) names the
// development switch that allows it; nothing else in it points there.
func TestARefusalALocalReceiverMeetsNamesTheSwitch(t *testing.T) {
	g := webhooks.Guard{Resolver: resolver}
	for _, raw := range []string{"http://127.0.0.1:9000/in", "https://127.0.0.1:9000/in", "https://[::1]:9000/in"} {
		var ae *apierr.Error
		if err := g.CheckURL(context.Background(), raw, "body.url"); !errors.As(err, &ae) || !strings.Contains(ae.Errors[0].Message, "ALLOW_PRIVATE_WEBHOOKS=true") {
			t.Errorf("CheckURL(%q) = %v; want the switch named", raw, err)
		}
	}
}
