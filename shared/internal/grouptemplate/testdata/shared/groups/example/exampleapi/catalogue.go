package exampleapi

import (
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/webhooks/eventdef"
)

// eventQueued is published once an example is queued.
const eventQueued = "example.queued"

// events are the webhook events the group emits.
var events = []eventdef.Def{
	{Name: eventQueued, EmittedBy: "examples.create", ReadBy: "examples.create", Subject: eventdef.SubjectNone,
		Description: "An example was queued (data: its status)."},
}

// services are the managed services the group sells.
var services = []catalog.Service{
	{ID: "example-service", Name: "Example Service", Description: "A throw-away service.", Available: true,
		Operations: []catalog.Operation{{ID: "examples.run", Summary: "Run an example", PriceMicro: catalog.Credits(0.01)}}},
}
