package api

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"platformapi/shared/base/apierr"
)

// SocketAddr is the client address as the socket saw it: the default of
// Config.ClientIP, right for a server clients reach directly (the local
// server, tests). An invalid address is the zero Addr, which no allowlist
// admits.
func SocketAddr(r *http.Request) netip.Addr {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(r.RemoteAddr)
	return a.Unmap()
}

// checkClientIP refuses a request from outside the allowedIps of any key of
// the chain. A child's list lies inside its ancestors' at creation; every
// key is checked anyway, which costs a scan of at most 64 networks each.
func (k *Kernel) checkClientIP(r *http.Request, p *Principal) error {
	addr := k.cfg.ClientIP(r)
	for _, c := range p.Chain {
		if !c.AllowsAddr(addr) {
			shown := "an unknown address"
			if addr.IsValid() {
				shown = addr.String()
			}
			return apierr.New(apierr.IPDenied, "This key may not be used from %s.", shown)
		}
	}
	return nil
}

// touchTimeout bounds the lastUsedAt write, which runs after the operation
// even when the request's own deadline has passed.
const touchTimeout = 2 * time.Second

// touch records the calling key's use once the operation has answered (see
// keys.Touch): at most one conditional write per key a minute, never
// failing the request; a failure is logged.
func (k *Kernel) touch(r *http.Request, keyID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), touchTimeout)
	defer cancel()
	if err := k.keys.Touch(ctx, keyID, k.now()); err != nil {
		Logger(r.Context()).Error("lastUsedAt write failed", "error", err.Error())
	}
}
