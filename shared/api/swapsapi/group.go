package swapsapi

import (
	"platformapi/shared/api"
	"platformapi/shared/ports"
	"platformapi/shared/wallets/walletsenv"
)

// Group is the swaps group on p (see walletsenv.FromPorts); its
// transactions are the wallets group's work.
func Group(p ports.Ports) (api.Group, error) {
	wc, sc := walletsenv.FromPorts(p)
	d := Deps{Wallets: wc, Swaps: sc}
	return api.Group{Name: "swaps", Register: func(k *api.Kernel) error { return Register(k, d) }}, nil
}
