package tradingapi

import (
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/webhooks/eventdef"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: "trading.order.new", EmittedBy: "trading.orders.create", ReadBy: "trading.orders.read", Subject: eventdef.SubjectNone,
		Description: "An order was accepted and rests on the venue, nothing filled yet (data: the order)."},
	{Name: "trading.order.partially_filled", EmittedBy: "trading.orders.create", ReadBy: "trading.orders.read", Subject: eventdef.SubjectNone,
		Description: "An order filled in part, at submission or later (data: the order with its fills)."},
	{Name: "trading.order.filled", EmittedBy: "trading.orders.create", ReadBy: "trading.orders.read", Subject: eventdef.SubjectNone,
		Description: "An order filled completely, at submission or later (data: the order with its fills)."},
	{Name: "trading.order.expired", EmittedBy: "trading.orders.create", ReadBy: "trading.orders.read", Subject: eventdef.SubjectNone,
		Description: "An order's time in force ran out; what filled stays filled, an unfilled order's credits are released (data: the order)."},
	{Name: "trading.order.rejected", EmittedBy: "trading.orders.create", ReadBy: "trading.orders.read", Subject: eventdef.SubjectNone,
		Description: "An order was refused at submission, e.g. insufficient_buying_power; nothing traded or charged (data: the order)."},
}

// services are the managed services the group sells; the catalogue
// generator gathers every group's into the one catalogue (docs/structure.md).
var services = []catalog.Service{
	{ID: "managed-trading", Name: "Managed Trading", Description: "Managed spot trading: firm quotes, orders and positions on a paper venue (or an Alpaca-compatible one).", Available: true,
		Operations: []catalog.Operation{{ID: "trading.orders.create", Summary: "Submit a spot trade", PriceMicro: catalog.Credits(0.1)}}},
}
