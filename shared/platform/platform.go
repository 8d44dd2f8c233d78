// Package platform wires every endpoint group onto one kernel: the local
// server, the black-box test harness and the OpenAPI generator use it. No
// Lambda links it; each function's main wires its own group.
package platform

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/api/approvalsapi"
	"platformapi/shared/api/connectionsapi"
	"platformapi/shared/api/creditsapi"
	"platformapi/shared/api/databasesapi"
	"platformapi/shared/api/filesapi"
	"platformapi/shared/api/keysapi"
	"platformapi/shared/api/mcpapi"
	"platformapi/shared/api/projectsapi"
	"platformapi/shared/api/publicapi"
	"platformapi/shared/api/runsapi"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/api/swapsapi"
	"platformapi/shared/api/tradingapi"
	"platformapi/shared/api/usageapi"
	"platformapi/shared/api/walletsapi"
	"platformapi/shared/api/webhooksapi"
	"platformapi/shared/blob"
	"platformapi/shared/catalog"
	"platformapi/shared/chain"
	"platformapi/shared/databases"
	"platformapi/shared/envelope"
	"platformapi/shared/files"
	"platformapi/shared/queue"
	"platformapi/shared/swaps"
	"platformapi/shared/topup"
	"platformapi/shared/trading"
	"platformapi/shared/upstream"
	"platformapi/shared/wallets"
	"platformapi/shared/webhooks"
	"platformapi/shared/x402"
)

// Deps are the dependencies of every group together; the kernel's own
// (store, clock, logger, limits) come in api.Config.
type Deps struct {
	// Backend names the storage backend in /health.
	Backend     string
	TopUp       topup.TopUpConfig
	Facilitator x402.Facilitator
	Services    upstream.Router
	Schemas     map[string]servicesapi.Schema
	// MCPAllowedOrigins are the browser origins the MCP server accepts.
	MCPAllowedOrigins []string
	WebhookQueue      queue.Queue
	RunsQueue         queue.Queue
	Artifacts         blob.Bucket
	Sealer            envelope.Sealer
	// Files holds uploaded files' bytes; FileQuota bounds each project's.
	Files     blob.Bucket
	FileQuota files.Quota
	// AllowPrivateWebhooks is the local development switch of webhooksapi.
	AllowPrivateWebhooks bool
	// Trading is the managed-trading venue (package tradingenv); the zero
	// value is the paper venue.
	Trading trading.Config
	// Databases is the managed-databases service (nil: its routes answer
	// 503), DatabasesQueue its worker's queue, ArchivePublicKey the key
	// /health publishes.
	Databases        *databases.Service
	DatabasesQueue   queue.Queue
	ArchivePublicKey string
	// Networks are the EVM chains of managed wallets and swaps (nil: their
	// routes answer 503); WalletsQueue carries wallet transactions to the
	// worker (nil: only reads and the recheck advance them).
	Networks     *chain.Networks
	WalletsQueue queue.Queue
	// SwapRouter quotes swaps on chains without a local pool (LI.FI in a
	// deployment); nil: none.
	SwapRouter swaps.Router
}

// WalletsConfig are the ports of managed wallets and swaps on these
// dependencies (the API's, and the worker's of the same process). The swap
// router is d.SwapRouter where a chain has no local pool.
func WalletsConfig(cfg api.Config, d Deps) (wallets.Config, swaps.Config) {
	return wallets.Config{Store: cfg.Store, Sealer: d.Sealer, Networks: d.Networks, Queue: d.WalletsQueue, Events: cfg.Events,
			PriceMicro: catalog.PriceMicro(wallets.ServiceID, wallets.OpTransactionsCreate), Now: cfg.Now, Logger: cfg.Logger},
		swaps.Config{Store: cfg.Store, Events: cfg.Events, Now: cfg.Now, Logger: cfg.Logger,
			Router:     &swaps.Dispatch{Local: &swaps.Pool{Networks: d.Networks, Now: time.Now}, Default: d.SwapRouter},
			PriceMicro: catalog.PriceMicro(swaps.ServiceID, "swaps.execute")}
}

// New builds the kernel with every group registered. Webhook events are
// published to d.WebhookQueue unless cfg names another publisher.
func New(cfg api.Config, d Deps) (*api.Kernel, error) {
	if cfg.Events == nil && d.WebhookQueue != nil {
		cfg.Events = webhooks.NewRepo(webhooks.Config{Store: cfg.Store, Sealer: d.Sealer, Queue: d.WebhookQueue, Now: cfg.Now})
	}
	if cfg.Sealer == nil {
		cfg.Sealer = d.Sealer
	}
	k := api.New(cfg)
	for _, register := range groups(cfg, d) {
		if err := register(k); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// groups are the registrations of every group, on d.
func groups(cfg api.Config, d Deps) []func(*api.Kernel) error {
	st := cfg.Store
	sd := servicesapi.Deps{Store: st, Services: d.Services, Schemas: d.Schemas, MCPAllowedOrigins: d.MCPAllowedOrigins, Sealer: d.Sealer}
	wc, sc := WalletsConfig(cfg, d)
	return []func(*api.Kernel) error{
		func(k *api.Kernel) error {
			return publicapi.Register(k, publicapi.Deps{Backend: d.Backend, ArchivePublicKey: d.ArchivePublicKey})
		},
		func(k *api.Kernel) error { return keysapi.Register(k, keysapi.Deps{Store: st}) },
		func(k *api.Kernel) error { return servicesapi.Register(k, sd) },
		func(k *api.Kernel) error { return mcpapi.Register(k, sd) },
		func(k *api.Kernel) error {
			return creditsapi.Register(k, creditsapi.Deps{Store: st, TopUp: d.TopUp, Facilitator: d.Facilitator})
		},
		func(k *api.Kernel) error { return projectsapi.Register(k, projectsapi.Deps{Store: st}) },
		func(k *api.Kernel) error { return approvalsapi.Register(k, approvalsapi.Deps{Store: st}) },
		func(k *api.Kernel) error {
			return runsapi.Register(k, runsapi.Deps{Store: st, Queue: d.RunsQueue, Artifacts: d.Artifacts, Services: d.Services})
		},
		func(k *api.Kernel) error {
			return connectionsapi.Register(k, connectionsapi.Deps{Store: st, Sealer: d.Sealer})
		},
		func(k *api.Kernel) error {
			return webhooksapi.Register(k, webhooksapi.Deps{Store: st, Sealer: d.Sealer, Queue: d.WebhookQueue, AllowPrivate: d.AllowPrivateWebhooks})
		},
		func(k *api.Kernel) error {
			return filesapi.Register(k, filesapi.Deps{Store: st, Bucket: d.Files, Quota: d.FileQuota})
		},
		func(k *api.Kernel) error {
			return tradingapi.Register(k, tradingapi.Deps{Store: st, Trading: d.Trading})
		},
		func(k *api.Kernel) error {
			return databasesapi.Register(k, databasesapi.Deps{Store: st, Databases: d.Databases, Queue: d.DatabasesQueue})
		},
		func(k *api.Kernel) error { return usageapi.Register(k, usageapi.Deps{Store: st}) },
		func(k *api.Kernel) error { return walletsapi.Register(k, walletsapi.Deps{Wallets: wc, Swaps: sc}) },
		func(k *api.Kernel) error { return swapsapi.Register(k, swapsapi.Deps{Wallets: wc, Swaps: sc}) },
	}
}

// Document is the OpenAPI document of every group, as publicapi embeds it.
func Document() ([]byte, error) {
	k, err := New(api.Config{}, Deps{})
	if err != nil {
		return nil, err
	}
	return api.Document(k.OpenAPI())
}
