package creditsapi

import (
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/webhooks/eventdef"
)

// Event names the group publishes, each after its operation committed.
const (
	eventCreditsToppedUp = "credits.topped_up"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: eventCreditsToppedUp, EmittedBy: "credits.x402.topUp", ReadBy: "credits.balance.read", Subject: eventdef.SubjectNone,
		Description: "Credits were bought through x402 (data: the top-up receipt)."},
}

// services are the managed services the group sells; the catalogue
// generator gathers every group's into the one catalogue (docs/structure.md).
var services = []catalog.Service{
	{ID: catalog.PlatformAPI, Name: "Platform API", Description: "The API itself: keys, projects, files, connections, runs, approvals, artifacts, webhooks.", Available: true,
		Operations: []catalog.Operation{{ID: "credits.x402.topUp", Summary: "Buy credits through x402 (free of charge)"}}},
}
