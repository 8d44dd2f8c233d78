package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"platformapi/shared/apierr"
	"platformapi/shared/approvals"
	"platformapi/shared/ids"
	"platformapi/shared/keys"
	"platformapi/shared/store/teststores"
)

// The requester of a money-moving approval must not decide it, not even
// with a child key it minted for that. Neither the requester nor
// any key below it decides; its ancestors and keys beside it do. A service
// action (docs/approvals.md) stays decidable by the worker key that asked.
func TestOnlyAKeyOutsideTheRequestersDescendantsDecidesAMoneyApproval(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	acct := ids.New("acct", now)
	root, requester, sibling := ids.New("key", now), ids.New("key", now), ids.New("key", now)
	child, grandchild := ids.New("key", now), ids.New("key", now)
	lineage := map[string]*keys.Key{
		"requester":              {ID: requester, Ancestors: []string{root}},
		"requester's child":      {ID: child, Ancestors: []string{root, requester}},
		"requester's grandchild": {ID: grandchild, Ancestors: []string{root, requester, child}},
		"requester's parent":     {ID: root},
		"requester's sibling":    {ID: sibling, Ancestors: []string{root}},
	}
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			repo := approvals.NewRepo(b.Open(t, clock), clock)
			ctx := context.Background()
			for _, c := range []struct {
				service, operation, decider string
				denied                      bool
			}{
				{"managed-wallets", "wallets.transactions.create", "requester", true},
				{"managed-wallets", "wallets.transactions.create", "requester's child", true},
				{"managed-wallets", "wallets.signatures.create", "requester's grandchild", true},
				{"universal-swaps", "swaps.execute", "requester's child", true},
				{"managed-wallets", "wallets.transactions.create", "requester's parent", false},
				{"managed-wallets", "wallets.signatures.create", "requester's sibling", false},
				{"cloud-superbrain", "memory.delete", "requester", false},
				{"cloud-superbrain", "memory.delete", "requester's child", false},
			} {
				a, err := repo.Create(ctx, acct, nil, requester, c.service, c.operation, json.RawMessage(`{"walletId":"w"}`))
				if err != nil {
					t.Fatal(err)
				}
				_, err = repo.Decide(ctx, acct, "", a.ID, "approve", nil, lineage[c.decider])
				var ae *apierr.Error
				if denied := errors.As(err, &ae) && ae.Code == apierr.SelfApprovalDenied; denied != c.denied || !denied && err != nil {
					t.Errorf("%s %s decided by the %s: %v, want denied %v", c.service, c.operation, c.decider, err, c.denied)
				}
			}
		})
	}
}
