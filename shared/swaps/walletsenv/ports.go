// Package walletsenv builds the ports of managed wallets and swaps from
// ports.Ports, for every process that serves or advances them: the chains
// among its resources, the envelope key, the wallets and webhook queues, the
// LI.FI router (LIFI_BASE_URL, LIFI_API_KEY) and the catalogue's prices.
// It lives under swaps because it wires swaps onto wallets: swaps depends
// on wallets, and nothing in wallets may depend on swaps.
package walletsenv

import (
	"time"

	"platformapi/shared/catalog"
	"platformapi/shared/chain"
	"platformapi/shared/deploy"
	"platformapi/shared/outbox"
	"platformapi/shared/ports"
	"platformapi/shared/swaps"
	"platformapi/shared/swaps/lifi"
	"platformapi/shared/wallets"
	"platformapi/shared/work"
)

// Uses is what every function that moves a managed wallet's funds needs:
// KMS opens the wallet's sealed key, the chains are where its transactions
// go, and the wallets queue carries each transaction through signing,
// broadcast and confirmation (the worker re-enqueues with a delay). The
// swap router too: a swap is told of each move of its wallet transactions,
// wherever that happens, and asks the router for the route's status.
var Uses = deploy.HTTP.With(deploy.Send(wallets.Queue), deploy.UseChains, deploy.UseLiFi)

// WorkerFunction is the Lambda that signs, broadcasts and confirms wallet
// transactions. One message per invocation: a message advances one
// transaction against its chain's RPC endpoint, and a batch would make the
// others wait for the slowest endpoint. Waiting for a receipt is a delayed
// re-enqueue, never a sleep, so a minute covers the RPC calls.
var WorkerFunction = deploy.Function{Name: wallets.Queue.Consumer, MemoryMiB: 512, Timeout: 60 * time.Second,
	Uses: Uses.With(deploy.Consume(wallets.Queue)), BatchSize: 1}

// RecheckFunction is the recheck's Lambda: each minute (every five seconds
// locally, so that a decided approval goes out within seconds), it
// advances every wallet transaction not yet final whose message was lost
// or dead-lettered, or whose credit settlement a crash left pending
// (wallets.Service.Recheck). Its timeout stays under the period, and an
// overlap is harmless (transaction writes are conditional on their
// revision).
var RecheckFunction = deploy.Function{Name: "wallets-recheck", MemoryMiB: 256, Timeout: 55 * time.Second, Uses: Uses,
	Schedule: work.Schedule{Every: time.Minute, Local: 5 * time.Second}}

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
	var events outbox.Recorder
	if p.Events != nil {
		events = p.Events
	}
	return wallets.Config{Store: p.Store, Sealer: p.Sealer, Networks: nets, Queue: p.Queue(wallets.Queue), Outbox: events,
			PriceMicro: catalog.PriceMicro(wallets.ServiceID, wallets.OpTransactionsCreate), Now: p.Now, Logger: p.Logger},
		swaps.Config{Store: p.Store, Outbox: events, Now: p.Now, Logger: p.Logger,
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
	p.Logger = p.Log(wallets.Queue.Consumer)
	ws, _ := swaps.Wire(FromPorts(p))
	return ports.Work{
		Workers: []work.Worker{wallets.NewWorker(ws).Work(p.Queue(wallets.Queue))},
		Passes:  []work.Pass{{Name: RecheckFunction.Name, Every: RecheckFunction.Schedule.LocalEvery(), Run: ws.Recheck}},
	}
}
