// Package platform is the list of endpoint groups: the local server, the
// benchmarks and the OpenAPI generator build every group of it on one
// ports.Ports, each through its own Deps. No Lambda links it; each
// function's main builds its own group's Deps, and each group's tests
// build only the groups they use.
package platform

import (
	"sync"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/base/chain"
	"platformapi/shared/groups/approvals/approvalsapi"
	"platformapi/shared/groups/connections/connectionsapi"
	"platformapi/shared/groups/credits/creditsapi"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/databasesapi"
	"platformapi/shared/groups/files/filesapi"
	"platformapi/shared/groups/keys/keysapi"
	"platformapi/shared/groups/mcp/mcpapi"
	"platformapi/shared/groups/projects/projectsapi"
	"platformapi/shared/groups/public/publicapi"
	"platformapi/shared/groups/runs/runsapi"
	"platformapi/shared/groups/services/servicesapi"
	"platformapi/shared/groups/swaps/swapsapi"
	"platformapi/shared/groups/swaps/walletsenv"
	"platformapi/shared/groups/trading/tradingapi"
	"platformapi/shared/groups/usage/usageapi"
	"platformapi/shared/groups/wallets/walletsapi"
	"platformapi/shared/groups/webhooks/webhooksapi"
)

// Groups are every endpoint group, in registration order, on no resource
// of their own (Resources): what the OpenAPI generator, the declarations
// and the tests that reach the whole platform build.
var Groups = With(Resources{})

// Resources are what a process built for single groups beyond the shared
// ports: the managed databases' service and their archive key (the public
// group publishes it), and the chains managed wallets and swaps reach. A
// zero field leaves its groups answering 503.
type Resources struct {
	Databases  *databases.Service
	ArchiveKey string
	Chains     *chain.Networks
}

// OnChain are the groups that serve on the chains, wired together once
// (walletsenv.Shared).
var OnChain = []func(*walletsenv.Shared) api.NewGroup{walletsapi.On, swapsapi.On}

// With is every endpoint group's constructor on r, in registration order:
// adding a group is one line here (docs/structure.md). Managed wallets
// and swaps share one wiring.
func With(r Resources) []api.NewGroup {
	sh := walletsenv.NewShared(r.Chains)
	return []api.NewGroup{
		publicapi.On(r.ArchiveKey),
		keysapi.Group,
		servicesapi.Group,
		mcpapi.Group,
		creditsapi.Group,
		projectsapi.Group,
		approvalsapi.Group,
		runsapi.Group,
		connectionsapi.Group,
		webhooksapi.Group,
		filesapi.Group,
		tradingapi.Group,
		databasesapi.On(r.Databases),
		usageapi.Group,
		walletsapi.On(sh),
		swapsapi.On(sh),
	}
}

// Deployment is what the groups deploy beside the kernel: their queues and
// their Lambda functions, as each group declares them.
var Deployment = sync.OnceValues(func() (deploy.Unit, error) { return api.Declared(Groups) })

// Queues are every queue of the deployment: those package work declares,
// then the groups'. The local process opens them, provisioning creates
// them and infra deploys them.
var Queues = sync.OnceValues(func() ([]work.Queue, error) { return api.Queues(Groups) })

// New is every group of list on p and the kernel serving them (those
// cfg.Groups names). The kernel publishes webhook events to p.Events and
// seals with p.Sealer unless cfg names its own.
func New(cfg api.Config, list []api.NewGroup, p ports.Ports) (*api.Kernel, []api.Group, error) {
	groups, err := api.Build(list, p)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Events == nil && p.Events != nil {
		cfg.Events = p.Events
	}
	if cfg.Sealer == nil {
		cfg.Sealer = p.Sealer
	}
	k, err := api.NewWith(cfg, groups)
	if err != nil {
		return nil, nil, err
	}
	return k, groups, nil
}

// Empty is the kernel of every group on no infrastructure and an empty
// configuration: what the document describes.
func Empty() (*api.Kernel, error) {
	k, _, err := New(api.Config{}, Groups, ports.Ports{Getenv: func(string) string { return "" }})
	return k, err
}

// Document is the OpenAPI document of every group, as publicapi embeds it.
func Document() ([]byte, error) {
	k, err := Empty()
	if err != nil {
		return nil, err
	}
	return api.Document(k.OpenAPI())
}
