package servicesapi

import (
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/webhooks/eventdef"
)

// Event names the group publishes, each after its operation committed.
const (
	eventServiceInvoked = "service.invoked"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: eventServiceInvoked, EmittedBy: "services.invoke", ReadBy: "capabilities.list.byService", Subject: eventdef.SubjectService,
		Description: "A managed service operation ran and was charged (data: serviceId, operationId, chargedCredits, upstreamRequestId; never its input or result)."},
}

// services are the managed services the group sells; the catalogue
// generator gathers every group's into the one catalogue (docs/structure.md).
var services = []catalog.Service{
	{ID: "cloud-superbrain", Name: "Cloud Superbrain", Description: "Managed memory: write, search, list and delete memories per account, project and end user.", Available: true,
		Operations: []catalog.Operation{
			{ID: "memory.write", Summary: "Store a memory", PriceMicro: catalog.Credits(0.01), Invocable: true},
			{ID: "memory.search", Summary: "Ranked lexical search over memories", PriceMicro: catalog.Credits(0.02), Invocable: true, Durable: true},
			{ID: "memory.list", Summary: "List memories", PriceMicro: catalog.Credits(0.005), Invocable: true},
			{ID: "memory.delete", Summary: "Permanently delete a memory (approval-gated)", PriceMicro: catalog.Credits(0.005), Invocable: true, Approval: true},
		}},
	{ID: "core-research", Name: "Core Research", Description: "Managed research over an operator-configured upstream.", Available: false,
		Operations: []catalog.Operation{{ID: "research.query", Summary: "Answer a research question", PriceMicro: catalog.Credits(0.5), Invocable: true, Durable: true}}},
	{ID: "managed-agents", Name: "Managed Agents", Description: "Hosted agents over an operator-configured upstream.", Available: false,
		Operations: []catalog.Operation{{ID: "agents.run", Summary: "Run an agent task", PriceMicro: catalog.Credits(1), Invocable: true, Durable: true}}},
	{ID: "managed-workflows", Name: "Managed Workflows", Description: "Hosted workflows over an operator-configured upstream.", Available: false,
		Operations: []catalog.Operation{{ID: "workflows.run", Summary: "Run a workflow", PriceMicro: catalog.Credits(1), Invocable: true, Durable: true}}},
}
