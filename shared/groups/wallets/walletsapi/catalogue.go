package walletsapi

import (
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/webhooks/eventdef"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: "wallet.created", EmittedBy: "wallets.create", ReadBy: "wallets.read", Subject: eventdef.SubjectNone,
		Description: "A managed wallet was created (data: the wallet, never its key)."},
	{Name: "wallet.policy_updated", EmittedBy: "wallets.policy.update", ReadBy: "wallets.read", Subject: eventdef.SubjectNone,
		Description: "A wallet's policy was replaced (data: the wallet with its new policy)."},
	{Name: "wallet.transaction.pending_approval", EmittedBy: "wallets.transactions.create", ReadBy: "wallets.transactions.read", Subject: eventdef.SubjectNone,
		Description: "A send waits for its approval (data: the transaction with approvalId)."},
	{Name: "wallet.transaction.queued", EmittedBy: "wallets.transactions.create", ReadBy: "wallets.transactions.read", Subject: eventdef.SubjectNone,
		Description: "A send is queued for signing and broadcast (data: the transaction)."},
	{Name: "wallet.transaction.submitted", EmittedBy: "wallets.transactions.create", ReadBy: "wallets.transactions.read", Subject: eventdef.SubjectNone,
		Description: "A send was signed and broadcast (data: the transaction with hash and nonce). Sent by the worker."},
	{Name: "wallet.transaction.confirmed", EmittedBy: "wallets.transactions.create", ReadBy: "wallets.transactions.read", Subject: eventdef.SubjectNone,
		Description: "A send was mined successfully and charged (data: the transaction with its fee). Sent by the worker."},
	{Name: "wallet.transaction.failed", EmittedBy: "wallets.transactions.create", ReadBy: "wallets.transactions.read", Subject: eventdef.SubjectNone,
		Description: "A send failed: simulation, revert or broadcast (data: the transaction with failure); its credits are released."},
	{Name: "wallet.transaction.rejected", EmittedBy: "wallets.transactions.create", ReadBy: "wallets.transactions.read", Subject: eventdef.SubjectNone,
		Description: "A send's approval was rejected; nothing was sent (data: the transaction)."},
	{Name: "wallet.transaction.expired", EmittedBy: "wallets.transactions.create", ReadBy: "wallets.transactions.read", Subject: eventdef.SubjectNone,
		Description: "A send's approval expired, or it could not be sent in time; nothing was sent (data: the transaction)."},
	{Name: "wallet.signature.created", EmittedBy: "wallets.signatures.create", ReadBy: "wallets.read", Subject: eventdef.SubjectNone,
		Description: "A wallet signed a quoted message or typed data (data: the signature)."},
}

// services are the managed services the group sells; the catalogue
// generator gathers every group's into the one catalogue (docs/structure.md).
var services = []catalog.Service{
	{ID: "managed-wallets", Name: "Managed Wallets", Description: "Custodial EVM wallets with policies and approvals.", Available: true,
		Operations: []catalog.Operation{{ID: "wallets.transactions.create", Summary: "Execute a wallet transaction", PriceMicro: catalog.Credits(0.1)}}},
}
