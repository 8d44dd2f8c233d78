package walletsapi

import (
	"platformapi/shared/api"
	"platformapi/shared/ports"
	"platformapi/shared/wallets/walletsenv"
)

// Group is the managed-wallets group on p (see walletsenv.FromPorts), with
// its worker and recheck.
func Group(p ports.Ports) (api.Group, error) {
	wc, sc := walletsenv.FromPorts(p)
	d := Deps{Wallets: wc, Swaps: sc}
	return api.Group{Name: "wallets", Register: func(k *api.Kernel) error { return Register(k, d) }, Work: walletsenv.Work(p)}, nil
}
