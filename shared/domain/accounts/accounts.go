// Package accounts names the account item: one item per account holding the
// numbers that must change atomically with the account's other records (the
// credit balance, the count of active webhooks). Authentication reads it in
// the same batch as the key chain, so a request knows them without another
// round trip.
package accounts

import "platformapi/shared/adapters/store"

// Attributes of the account item.
const (
	AttrBalance        = "balance"        // micro-credits, never negative
	AttrActiveWebhooks = "activeWebhooks" // active webhooks, for publishing without a query
)

// Key addresses an account's item.
func Key(accountID string) store.Key { return store.Key{PK: "acct#" + accountID, SK: "account"} }
