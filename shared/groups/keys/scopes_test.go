package keys_test

import (
	"slices"
	"testing"

	"platformapi/shared/groups/keys"
)

// specScopes is the complete scope set the specification fixes, in its
// order.
var specScopes = []string{
	"services:read", "services:invoke", "credits:read", "credits:write",
	"projects:read", "projects:write", "usage:read", "audit:read",
	"files:read", "files:write", "connections:read", "connections:write",
	"databases:read", "databases:write", "wallets:read", "wallets:create",
	"wallets:sign", "wallets:transact", "trading:read", "trading:execute",
	"runs:read", "runs:write", "approvals:read", "approvals:write",
	"artifacts:read", "webhooks:read", "webhooks:write", "api_keys:manage",
}

// The scopes the groups declare begin with the specification's, the same
// names in the same order: a first key lists its scopes in this order, so a
// group that declares its own adds them after, never between.
func TestTheScopeSetBeginsWithTheSpecsInItsOrder(t *testing.T) {
	if len(keys.Scopes) < len(specScopes) || !slices.Equal(keys.Scopes[:len(specScopes)], specScopes) {
		t.Fatalf("keys.Scopes = %v, want it to begin with %v", keys.Scopes, specScopes)
	}
	for _, s := range keys.Scopes {
		if !keys.IsScope(s) {
			t.Errorf("%s is not a scope", s)
		}
	}
}
