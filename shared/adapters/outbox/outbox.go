// Package outbox is the port through which a domain that commits its own
// writes (wallets, swaps, trading) records the webhook events of a change.
// It is the one declaration those domains share, and it imports only the
// store, so none of them links the webhook domain, or another of them, to
// name it.
package outbox

import (
	"context"

	"platformapi/shared/adapters/store"
)

// Recorder records webhook events as members of the transaction whose
// change they announce (webhooks.Repo.Outboxed): the caller appends ops to
// that transaction and calls dispatch once it committed. An event then
// exists exactly when its change does, so a crash between the commit and
// the fan-out loses none (the outbox sweep fans it out) and a retry that
// replays the change adds none.
type Recorder interface {
	Outboxed(accountID, projectID, event string, data any) (ops []store.Op, dispatch func(context.Context), err error)
}
