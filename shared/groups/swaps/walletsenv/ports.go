// Package walletsenv wires managed wallets and swaps together, once, for
// every process that serves or advances them: on the chains, the envelope
// key, the wallets queue, the webhook outbox, the LI.FI router
// (LIFI_BASE_URL, LIFI_API_KEY) and the catalogue's prices. It lives under
// swaps because it wires swaps onto wallets: swaps depends on wallets, and
// nothing in wallets may depend on swaps.
package walletsenv

import (
	"log/slog"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"sync"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/outbox"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/chain"
	"platformapi/shared/groups/swaps"
	"platformapi/shared/groups/swaps/lifi"
	"platformapi/shared/groups/wallets"
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

// Deps are what managed wallets and swaps use: the table, the envelope
// key, the chains (nil: their routes answer 503 and there is no work), the
// wallets queue (nil: only reads and the recheck advance transactions),
// the outbox their events commit through, the swap router for chains
// without a local pool (nil: none), the clock and the logger.
type Deps struct {
	Store  store.Store
	Sealer envelope.Sealer
	Chains *chain.Networks
	Queue  queue.Queue
	Outbox outbox.Recorder
	Router swaps.Router
	Now    func() time.Time
	Logger *slog.Logger
}

// Services are managed wallets and swaps wired together (swaps.Wire: a
// swap hears of each move of its wallet transactions), once for every
// group and worker of a process: the wallets and swaps groups take the
// same.
type Services struct {
	Wallets *wallets.Service
	Swaps   *swaps.Service
	queue   queue.Queue
	chains  bool
}

// Wire builds managed wallets and swaps on d.
func Wire(d Deps) Services {
	wc := wallets.Config{Store: d.Store, Sealer: d.Sealer, Networks: d.Chains, Queue: d.Queue, Outbox: d.Outbox,
		PriceMicro: catalog.PriceMicro(wallets.ServiceID, wallets.OpTransactionsCreate), Now: d.Now, Logger: d.Logger}
	sc := swaps.Config{Store: d.Store, Outbox: d.Outbox, Now: d.Now, Logger: d.Logger,
		Router:     &swaps.Dispatch{Local: &swaps.Pool{Networks: d.Chains, Now: time.Now}, Default: d.Router},
		PriceMicro: catalog.PriceMicro(swaps.ServiceID, "swaps.execute")}
	ws, sw := swaps.Wire(wc, sc)
	return Services{Wallets: ws, Swaps: sw, queue: d.Queue, chains: d.Chains != nil}
}

// Router is the LI.FI router LIFI_BASE_URL or LIFI_API_KEY names, read by
// getenv (nil is os.Getenv), or nil when neither is set.
func Router(getenv func(string) string) swaps.Router {
	base, key := ports.Env("LIFI_BASE_URL", getenv), ports.Env("LIFI_API_KEY", getenv)
	if base == "" && key == "" {
		return nil
	}
	return lifi.New(lifi.Config{BaseURL: base, APIKey: key})
}

// FromPorts are the Deps of managed wallets and swaps on p with chains.
func FromPorts(p ports.Ports, chains *chain.Networks) Deps {
	return Deps{Store: p.Store, Sealer: p.Sealer, Chains: chains, Queue: p.Queue(wallets.Queue), Outbox: p.Events,
		Router: Router(p.Getenv), Now: p.Now, Logger: p.Logger}
}

// Work is the wallets group's work: the worker that carries wallet
// transactions on the wallets queue, and the recheck that advances those
// the queue lost. Without chains there is none.
func (s Services) Work() ports.Work {
	if !s.chains {
		return ports.Work{}
	}
	return ports.Work{
		Workers: []work.Worker{wallets.NewWorker(s.Wallets).Work(s.queue)},
		Passes:  []work.Pass{{Name: RecheckFunction.Name, Every: RecheckFunction.Schedule.LocalEvery(), Run: s.Wallets.Recheck}},
	}
}

// Shared wires managed wallets and swaps once on the chains of one
// process, for its wallets and swaps groups and their work together.
type Shared struct {
	chains *chain.Networks
	once   sync.Once
	s      Services
}

// NewShared is the wiring of one process on chains.
func NewShared(chains *chain.Networks) *Shared { return &Shared{chains: chains} }

// On is the services on p: wired on the first call, the same on every
// later one. Without chains every route answers 503 and there is no work,
// so there is no state to share: each call wires its own, on its p (the
// list every test binary builds on its own ports).
func (sh *Shared) On(p ports.Ports) Services {
	if sh.chains == nil {
		return Wire(FromPorts(p, nil))
	}
	sh.once.Do(func() { sh.s = Wire(FromPorts(p, sh.chains)) })
	return sh.s
}
