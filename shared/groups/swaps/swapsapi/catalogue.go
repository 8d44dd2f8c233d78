package swapsapi

import (
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/webhooks/eventdef"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: "swap.pending", EmittedBy: "swaps.execute", ReadBy: "swaps.read", Subject: eventdef.SubjectNone,
		Description: "A swap started: its transactions are on their way (data: the swap)."},
	{Name: "swap.pending_approval", EmittedBy: "swaps.execute", ReadBy: "swaps.read", Subject: eventdef.SubjectNone,
		Description: "A swap waits for its approval (data: the swap)."},
	{Name: "swap.done", EmittedBy: "swaps.execute", ReadBy: "swaps.read", Subject: eventdef.SubjectNone,
		Description: "A swap completed; toAmount is what the wallet received (data: the swap)."},
	{Name: "swap.failed", EmittedBy: "swaps.execute", ReadBy: "swaps.read", Subject: eventdef.SubjectNone,
		Description: "A swap failed (substatus, e.g. slippage_exceeded); only gas was spent (data: the swap)."},
}

// services are the managed services the group sells; the catalogue
// generator gathers every group's into the one catalogue (docs/structure.md).
var services = []catalog.Service{
	{ID: "universal-swaps", Name: "Universal Swaps", Description: "Token swaps from managed wallets.", Available: true,
		Operations: []catalog.Operation{{ID: "swaps.execute", Summary: "Execute a swap", PriceMicro: catalog.Credits(0.1)}}},
}
