// Package platform is the list of endpoint groups: the local server, the
// benchmarks and the OpenAPI generator build every group of it on one
// ports.Ports. No Lambda links it; each function's main wires its own
// group, and each group's tests build only the groups they use.
package platform

import (
	"sync"

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
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// Groups are every endpoint group's constructor, in registration order:
// adding a group is one line here (docs/structure.md).
var Groups = []api.NewGroup{
	publicapi.Group,
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
	databasesapi.Group,
	usageapi.Group,
	walletsapi.Group,
	swapsapi.Group,
}

// Deployment is what the groups deploy beside the kernel: their queues and
// their Lambda functions, as each group declares them.
var Deployment = sync.OnceValues(func() (deploy.Unit, error) { return api.Declared(Groups) })

// Queues are every queue of the deployment: those package work declares,
// then the groups'. The local process opens them, provisioning creates
// them and infra deploys them.
var Queues = sync.OnceValues(func() ([]work.Queue, error) { return api.Queues(Groups) })

// New is every group on p and the kernel serving them (those cfg.Groups
// names). The kernel publishes webhook events to p.Events and seals with
// p.Sealer unless cfg names its own.
func New(cfg api.Config, p ports.Ports) (*api.Kernel, []api.Group, error) {
	groups, err := api.Build(Groups, p)
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
	k, _, err := New(api.Config{}, ports.Ports{Getenv: func(string) string { return "" }})
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
