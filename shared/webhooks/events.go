package webhooks

import (
	"encoding/json"
	"slices"
	"time"
)

// AllEvents subscribes a webhook to every event, including ones added later.
const AllEvents = "*"

// Event names. Each is emitted by the operation named in Catalogue, after it
// succeeded, with the resource it produced as data.
const (
	EventAPIKeyCreated        = "api_key.created"
	EventAPIKeyRevoked        = "api_key.revoked"
	EventAPIKeyRolled         = "api_key.rolled"
	EventProjectCreated       = "project.created"
	EventProjectUpdated       = "project.updated"
	EventProjectArchived      = "project.archived"
	EventApprovalRequested    = "approval.requested"
	EventApprovalDecided      = "approval.decided"
	EventCreditsToppedUp      = "credits.topped_up"
	EventServiceInvoked       = "service.invoked"
	EventWebhookCreated       = "webhook.created"
	EventWebhookUpdated       = "webhook.updated"
	EventWebhookDisabled      = "webhook.disabled"
	EventWebhookSecretRotated = "webhook.secret_rotated"
	EventConnectionCreated    = "connection.created"
	EventConnectionRotated    = "connection.rotated"
	EventConnectionDisabled   = "connection.disabled"
	EventConnectionEnabled    = "connection.enabled"
	EventConnectionDeleted    = "connection.deleted"
	EventFileCreated          = "file.created"
	EventFileDeleted          = "file.deleted"
	EventTradingOrderNew      = "trading.order.new"
	EventTradingOrderPartial  = "trading.order.partially_filled"
	EventTradingOrderFilled   = "trading.order.filled"
	EventTradingOrderExpired  = "trading.order.expired"
	EventTradingOrderRejected = "trading.order.rejected"

	EventWalletCreated           = "wallet.created"
	EventWalletPolicyUpdated     = "wallet.policy_updated"
	EventWalletTxPendingApproval = "wallet.transaction.pending_approval"
	EventWalletTxQueued          = "wallet.transaction.queued"
	EventWalletTxSubmitted       = "wallet.transaction.submitted"
	EventWalletTxConfirmed       = "wallet.transaction.confirmed"
	EventWalletTxFailed          = "wallet.transaction.failed"
	EventWalletTxRejected        = "wallet.transaction.rejected"
	EventWalletTxExpired         = "wallet.transaction.expired"
	EventWalletSignatureCreated  = "wallet.signature.created"
	EventSwapPending             = "swap.pending"
	EventSwapPendingApproval     = "swap.pending_approval"
	EventSwapDone                = "swap.done"
	EventSwapFailed              = "swap.failed"

	EventDatabaseProvisioned       = "database.provisioned"
	EventDatabaseDeprovisioned     = "database.deprovisioned"
	EventDatabaseTransferCompleted = "database.transfer.completed" // published by the databases worker
	EventDatabaseTransferFailed    = "database.transfer.failed"    // published by the databases worker
)

// EventType is one entry of the catalogue.
type EventType struct {
	Name        string
	EmittedBy   string // the operation id that emits it
	Description string
	// ReadBy is the route id of the operation that reads the event's
	// resource. A webhook receives the event only if its creator key could
	// call that operation right now: its scopes, its fixed service (e.g.
	// core-database) and operation access (visibility.go).
	ReadBy string
	// Subject is what of the event's data the creator must also be allowed
	// to see, beyond what ReadBy demands.
	Subject Subject
}

// Subject names the part of an event's data whose visibility depends on
// the reader, and how to find it in the data.
type Subject int

const (
	// SubjectNone: the reading operation's scopes, service and the
	// webhook's project decide alone.
	SubjectNone Subject = iota
	// SubjectService: data.serviceId names a managed service; the creator
	// needs access to it (allowedServices).
	SubjectService
	// SubjectKey: data.id is an API key; the creator must be that key or
	// one of its ancestors (no sibling branch: docs/webhooks.md).
	SubjectKey
	// SubjectWebhook: data.id is a webhook; the creator must be able to
	// manage it (it or a descendant created it, in its project scope).
	SubjectWebhook
)

// Catalogue is every event a webhook can subscribe to, with who may read
// it: name, emitting operation, description, reading operation, subject.
// Adding an event is adding a line here and the publish call in its
// handler.
var Catalogue = []EventType{
	{EventAPIKeyCreated, "apiKeys.create", "A child key was created (data: the key record, never its secret).", "apiKeys.list", SubjectKey},
	{EventAPIKeyRevoked, "apiKeys.revoke", "A key was revoked, and with it its descendants (data: the key record).", "apiKeys.list", SubjectKey},
	{EventAPIKeyRolled, "apiKeys.roll", "A key was rolled (data: id and key, the successor's record, never its secret; previousKey, the rolled key with its new expiry).", "apiKeys.list", SubjectKey},
	{EventProjectCreated, "projects.create", "A project was created (data: the project).", "projects.read", SubjectNone},
	{EventProjectUpdated, "projects.update", "A project's name, description or metadata changed (data: the project).", "projects.read", SubjectNone},
	{EventProjectArchived, "projects.archive", "A project was archived (data: the project).", "projects.read", SubjectNone},
	{EventApprovalRequested, "approvals.create", "A service action awaits approval (data: the approval).", "approvals.list", SubjectNone},
	{EventApprovalDecided, "approvals.decide", "An approval was approved or rejected (data: the approval).", "approvals.list", SubjectNone},
	{EventCreditsToppedUp, "credits.x402.topUp", "Credits were bought through x402 (data: the top-up receipt).", "credits.balance.read", SubjectNone},
	{EventServiceInvoked, "services.invoke", "A managed service operation ran and was charged (data: serviceId, operationId, chargedCredits, upstreamRequestId; never its input or result).", "capabilities.list.byService", SubjectService},
	{EventWebhookCreated, "webhooks.create", "A webhook was created; a new webhook subscribed to it receives its own, a ready-made test (data: the webhook).", "webhooks.list", SubjectWebhook},
	{EventWebhookUpdated, "webhooks.update", "A webhook's URL, events, description or status changed (data: the webhook).", "webhooks.list", SubjectWebhook},
	{EventWebhookDisabled, "webhooks.disable", "A webhook was disabled (data: the webhook).", "webhooks.list", SubjectWebhook},
	{EventWebhookSecretRotated, "webhooks.rotate", "A webhook's signing secret was rotated (data: the webhook, never a secret).", "webhooks.list", SubjectWebhook},
	{EventConnectionCreated, "connections.create", "A protected connection was created (data: the connection record, never its credentials).", "connections.read", SubjectNone},
	{EventConnectionRotated, "connections.update", "A connection's credentials were rotated; the previous version works for 24 hours more (data: the connection record).", "connections.read", SubjectNone},
	{EventConnectionDisabled, "connections.update", "A connection was disabled; calls naming it are refused (data: the connection record).", "connections.read", SubjectNone},
	{EventConnectionEnabled, "connections.update", "A disabled connection was enabled again (data: the connection record).", "connections.read", SubjectNone},
	{EventConnectionDeleted, "connections.delete", "A connection and every sealed version of its credentials were destroyed (data: the connection record as it was).", "connections.read", SubjectNone},
	{EventFileCreated, "files.create", "A file was uploaded (data: the file record, never its bytes).", "files.read", SubjectNone},
	{EventFileDeleted, "files.delete", "A file was deleted (data: the file record with status deleted).", "files.read", SubjectNone},
	{EventTradingOrderNew, "trading.orders.create", "An order was accepted and rests on the venue, nothing filled yet (data: the order).", "trading.orders.read", SubjectNone},
	{EventTradingOrderPartial, "trading.orders.create", "An order filled in part, at submission or later (data: the order with its fills).", "trading.orders.read", SubjectNone},
	{EventTradingOrderFilled, "trading.orders.create", "An order filled completely, at submission or later (data: the order with its fills).", "trading.orders.read", SubjectNone},
	{EventTradingOrderExpired, "trading.orders.create", "An order's time in force ran out; what filled stays filled, an unfilled order's credits are released (data: the order).", "trading.orders.read", SubjectNone},
	{EventTradingOrderRejected, "trading.orders.create", "An order was refused at submission, e.g. insufficient_buying_power; nothing traded or charged (data: the order).", "trading.orders.read", SubjectNone},
	{EventWalletCreated, "wallets.create", "A managed wallet was created (data: the wallet, never its key).", "wallets.read", SubjectNone},
	{EventWalletPolicyUpdated, "wallets.policy.update", "A wallet's policy was replaced (data: the wallet with its new policy).", "wallets.read", SubjectNone},
	{EventWalletTxPendingApproval, "wallets.transactions.create", "A send waits for its approval (data: the transaction with approvalId).", "wallets.transactions.read", SubjectNone},
	{EventWalletTxQueued, "wallets.transactions.create", "A send is queued for signing and broadcast (data: the transaction).", "wallets.transactions.read", SubjectNone},
	{EventWalletTxSubmitted, "wallets.transactions.create", "A send was signed and broadcast (data: the transaction with hash and nonce). Sent by the worker.", "wallets.transactions.read", SubjectNone},
	{EventWalletTxConfirmed, "wallets.transactions.create", "A send was mined successfully and charged (data: the transaction with its fee). Sent by the worker.", "wallets.transactions.read", SubjectNone},
	{EventWalletTxFailed, "wallets.transactions.create", "A send failed: simulation, revert or broadcast (data: the transaction with failure); its credits are released.", "wallets.transactions.read", SubjectNone},
	{EventWalletTxRejected, "wallets.transactions.create", "A send's approval was rejected; nothing was sent (data: the transaction).", "wallets.transactions.read", SubjectNone},
	{EventWalletTxExpired, "wallets.transactions.create", "A send's approval expired, or it could not be sent in time; nothing was sent (data: the transaction).", "wallets.transactions.read", SubjectNone},
	{EventWalletSignatureCreated, "wallets.signatures.create", "A wallet signed a quoted message or typed data (data: the signature).", "wallets.read", SubjectNone},
	{EventSwapPending, "swaps.execute", "A swap started: its transactions are on their way (data: the swap).", "swaps.read", SubjectNone},
	{EventSwapPendingApproval, "swaps.execute", "A swap waits for its approval (data: the swap).", "swaps.read", SubjectNone},
	{EventSwapDone, "swaps.execute", "A swap completed; toAmount is what the wallet received (data: the swap).", "swaps.read", SubjectNone},
	{EventSwapFailed, "swaps.execute", "A swap failed (substatus, e.g. slippage_exceeded); only gas was spent (data: the swap).", "swaps.read", SubjectNone},
	{EventDatabaseProvisioned, "databases.account.provision", "A managed database was provisioned for the account or project (data: the database).", "databases.account.read", SubjectNone},
	{EventDatabaseDeprovisioned, "databases.account.deprovision", "A managed database and its data were deleted (data: id, status deleted).", "databases.account.read", SubjectNone},
	{EventDatabaseTransferCompleted, "databases.transfers.create", "An export's archive is ready to download, or an import replaced the database (data: the transfer). Sent by the worker, after POST /databases/transfers (export) or …/complete (import).", "databases.transfers.read", SubjectNone},
	{EventDatabaseTransferFailed, "databases.transfers.create", "A transfer failed and the database is unchanged; the reason is in error (data: the transfer).", "databases.transfers.read", SubjectNone},
}

// EventNames lists the catalogue's names in order.
func EventNames() []string {
	out := make([]string, len(Catalogue))
	for i, e := range Catalogue {
		out[i] = e.Name
	}
	return out
}

// KnownEvent reports whether name is in the catalogue.
func KnownEvent(name string) bool {
	return slices.ContainsFunc(Catalogue, func(e EventType) bool { return e.Name == name })
}

// Payload is the body of every delivery.
type Payload struct {
	ID        string          `json:"id" doc:"Event id (evt_…); a replay carries the same id, so receivers can deduplicate"`
	Type      string          `json:"type" doc:"Event name, also in X-Service-Event"`
	CreatedAt time.Time       `json:"createdAt"`
	AccountID string          `json:"accountId"`
	ProjectID *string         `json:"projectId" doc:"The project the event happened in, or null at account level"`
	Data      json.RawMessage `json:"data"`
}
