// Package walletsenv reads the ports of managed wallets and swaps for the
// Lambda functions that serve or advance them (wallets, swaps, wallets-worker,
// wallets-recheck) from their environment: the chains of RPC_URL_<chainId>,
// the envelope key, the wallets and webhook queues, the LI.FI router and
// the catalogue's prices.
package walletsenv

import (
	"context"
	"errors"
	"fmt"
	"os"

	"platformapi/shared/catalog"
	"platformapi/shared/chain"
	"platformapi/shared/lambdaedge"
	"platformapi/shared/swaps"
	"platformapi/shared/swaps/lifi"
	"platformapi/shared/wallets"
	"platformapi/shared/webhooks"
	"platformapi/shared/work"
)

// Config are the ports of the two services of a function, for the groups'
// Deps and swaps.Wire. Each dependency is required: CDK grants them all to
// these functions, so a missing one is a broken deployment, better refused
// at cold start than found half-way through a transaction.
func Config(ctx context.Context, e *lambdaedge.Env) (wallets.Config, swaps.Config, error) {
	nets, err := chain.FromEnv(os.Environ())
	if err != nil {
		return wallets.Config{}, swaps.Config{}, err
	}
	if e.Sealer == nil {
		return wallets.Config{}, swaps.Config{}, errors.New("wallets: the envelope key is not configured (KMS_KEY_ID)")
	}
	if e.Webhooks == nil {
		return wallets.Config{}, swaps.Config{}, errors.New("wallets: the webhook queue is not configured (WEBHOOK_QUEUE_URL)")
	}
	q, err := e.Queue(ctx, e.AWS.Names.Queue(work.Wallets))
	if err != nil {
		return wallets.Config{}, swaps.Config{}, fmt.Errorf("wallets: wallets queue: %w", err)
	}
	if q == nil {
		return wallets.Config{}, swaps.Config{}, errors.New("wallets: the wallets queue is not configured (WALLETS_QUEUE_URL)")
	}
	events := webhooks.NewRepo(webhooks.Config{Store: e.Store, Queue: e.Webhooks})
	return wallets.Config{Store: e.Store, Sealer: e.Sealer, Networks: nets, Queue: q, Events: events,
			PriceMicro: catalog.PriceMicro(wallets.ServiceID, wallets.OpTransactionsCreate), Logger: e.Logger},
		swaps.Config{Store: e.Store, Events: events, Logger: e.Logger,
			Router:     lifi.New(lifi.Config{BaseURL: os.Getenv("LIFI_BASE_URL"), APIKey: os.Getenv("LIFI_API_KEY")}),
			PriceMicro: catalog.PriceMicro(swaps.ServiceID, "swaps.execute")}, nil
}
