// Package walletsenv builds the ports of managed wallets and swaps from
// ports.Ports, for every process that serves or advances them: the chains
// among its resources, the envelope key, the wallets and webhook queues, the
// LI.FI router (LIFI_BASE_URL, LIFI_API_KEY) and the catalogue's prices.
package walletsenv

import (
	"time"

	"platformapi/shared/catalog"
	"platformapi/shared/chain"
	"platformapi/shared/ports"
	"platformapi/shared/swaps"
	"platformapi/shared/swaps/lifi"
	"platformapi/shared/wallets"
	"platformapi/shared/work"
)

// FromPorts are the ports of managed wallets and swaps on p: the chains
// among p's resources (none: their routes answer 503), the wallets queue
// (none: only reads and the recheck advance transactions), and a swap
// router for chains without a local pool when LIFI_BASE_URL or
// LIFI_API_KEY names one.
func FromPorts(p ports.Ports) (wallets.Config, swaps.Config) {
	nets, _ := ports.Resource[*chain.Networks](p)
	var router swaps.Router
	if base, key := p.Env("LIFI_BASE_URL"), p.Env("LIFI_API_KEY"); base != "" || key != "" {
		router = lifi.New(lifi.Config{BaseURL: base, APIKey: key})
	}
	var events wallets.Publisher
	if p.Events != nil {
		events = p.Events
	}
	return wallets.Config{Store: p.Store, Sealer: p.Sealer, Networks: nets, Queue: p.Queue(work.Wallets), Events: events,
			PriceMicro: catalog.PriceMicro(wallets.ServiceID, wallets.OpTransactionsCreate), Now: p.Now, Logger: p.Logger},
		swaps.Config{Store: p.Store, Events: events, Now: p.Now, Logger: p.Logger,
			Router:     &swaps.Dispatch{Local: &swaps.Pool{Networks: nets, Now: time.Now}, Default: router},
			PriceMicro: catalog.PriceMicro(swaps.ServiceID, "swaps.execute")}
}

// Work is the wallets group's work on p: the worker that carries wallet
// transactions on the wallets queue, and the recheck that advances those
// the queue lost. Without chains there is none.
func Work(p ports.Ports) ports.Work {
	if _, ok := ports.Resource[*chain.Networks](p); !ok {
		return ports.Work{}
	}
	p.Logger = p.Log(work.Wallets.Consumer)
	ws, _ := swaps.Wire(FromPorts(p))
	return ports.Work{
		Workers: []work.Worker{wallets.NewWorker(ws).Work(p.Queue(work.Wallets))},
		Passes:  []work.Pass{{Name: work.WalletsRecheck.Function, Every: work.WalletsRecheck.LocalEvery(), Run: ws.Recheck}},
	}
}
