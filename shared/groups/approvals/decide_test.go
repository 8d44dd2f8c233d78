package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/approvals/lineagetest"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
)

// tree is an account's keys by name (lineagetest.Tree), made and rolled
// through keys.Repo.
type tree map[string]*keys.Key

func grow(t *testing.T, st store.Store, now time.Time, name string) tree {
	t.Helper()
	ctx := context.Background()
	r := keys.NewRepo(st, func() time.Time { return now })
	root, err := r.CreateAccount(ctx, credittoken.Claims{ID: "ctk_" + name, CreditsMicro: 1, ExpiresAt: now.Add(time.Hour).Unix()}, keys.CreateKeyRequest{})
	if err != nil {
		t.Fatal(err)
	}
	k := tree{"root": root.Key}
	chains := map[string][]*keys.Key{"root": {root.Key}}
	for _, s := range lineagetest.Tree {
		var c *keys.Created
		if s.Roll {
			var rolled *keys.Rolled
			if rolled, err = r.Roll(ctx, root.Key, k[s.From].ID, now.Add(time.Hour), nil); err == nil {
				c = &rolled.Created
			}
		} else {
			c, err = r.CreateChild(ctx, chains[s.From], keys.CreateKeyRequest{}, func(string) bool { return false })
		}
		if err != nil {
			t.Fatal(err)
		}
		parent := chains[s.From]
		if s.Roll {
			parent = parent[:len(parent)-1]
		}
		k[s.Name], chains[s.Name] = c.Key, append(parent[:len(parent):len(parent)], c.Key)
	}
	return k
}

// Nobody approves their own request: no key of the requester's lineage
// decides a money-moving approval. The lineage is the requester's roll
// chain (predecessors and successors, transitively), its ancestors with
// theirs (a rolled parent's successor is still the parent) and the
// descendants of any key of its roll chain; each is refused with 403
// self_approval_denied and the approval stays pending, on both stores. A
// sibling, a cousin, an ancestor's sibling and a key minted beside the
// requester by its rolled parent decide. A service action
// (docs/approvals.md) stays decidable by the worker key that asked.
func TestNoKeyOfTheRequestersLineageDecidesAMoneyApproval(t *testing.T) {
	now := time.Unix(1_800_000_000, 0).UTC()
	clock := func() time.Time { return now }
	money := []struct{ service, operation string }{
		{"managed-wallets", "wallets.transactions.create"},
		{"managed-wallets", "wallets.signatures.create"},
		{"universal-swaps", "swaps.execute"},
	}
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := b.Open(t, clock)
			k := grow(t, st, now, b.Name)
			acct := k["root"].AccountID
			repo := approvals.NewRepo(st, clock)
			for i, c := range []struct {
				requester, decider string
				denied             bool
			}{
				{"requester", "requester", true},
				{"requester", "successor", true},
				{"successor", "requester", true},
				{"requester", "successor²", true},
				{"successor²", "requester", true},
				{"root", "root′", true},
				{"requester", "root′", true},
				{"requester", "parent", true},
				{"requester", "root", true},
				{"requester", "parent′", true},
				{"requester", "child", true},
				{"requester", "grandchild", true},
				{"requester", "child of the successor", true},
				{"successor²", "child", true},
				{"child", "successor", true},
				{"requester", "sibling", false},
				{"requester", "cousin", false},
				{"requester", "uncle", false},
				{"requester", "sibling via parent′", false},
				{"successor", "sibling", false},
			} {
				// Every case with every money operation; on the emulator,
				// which serves one request at a time, each case with one
				// of them in turn, so that each operation still meets
				// deciders refused and deciders allowed.
				ops := money
				if b.Name != teststores.Embedded.Name {
					ops = money[i%len(money) : i%len(money)+1]
				}
				for _, m := range ops {
					a, err := repo.Create(ctx, acct, nil, k[c.requester].ID, m.service, m.operation, json.RawMessage(`{"walletId":"w"}`))
					if err != nil {
						t.Fatal(err)
					}
					_, err = repo.Decide(ctx, acct, "", a.ID, "approve", nil, k[c.decider])
					var ae *apierr.Error
					denied := errors.As(err, &ae) && ae.Code == apierr.SelfApprovalDenied
					if denied != c.denied || !denied && err != nil {
						t.Errorf("%s of the %s decided by the %s: %v, want denied %v", m.operation, c.requester, c.decider, err, c.denied)
					}
					want := map[bool]string{true: approvals.StatusPending, false: approvals.StatusApproved}[c.denied]
					got, err := repo.Get(ctx, acct, "", a.ID)
					if err != nil {
						t.Fatal(err)
					}
					if got.Status != want || c.denied && got.DecidedBy != nil {
						t.Errorf("%s of the %s decided by the %s: left %s, want %s", m.operation, c.requester, c.decider, got.Status, want)
					}
				}
			}
			for _, decider := range []string{"requester", "child", "successor"} {
				a, err := repo.Create(ctx, acct, nil, k["requester"].ID, "cloud-superbrain", "memory.delete", json.RawMessage(`{"memoryId":"m"}`))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := repo.Decide(ctx, acct, "", a.ID, "approve", nil, k[decider]); err != nil {
					t.Errorf("memory.delete decided by the %s: %v", decider, err)
				}
			}
		})
	}
}

// A requester whose roll chain is longer than keys.MaxRollChain cannot have
// its lineage read whole, so its money approvals are refused to every
// decider, a sibling too, rather than decided on part of it. (The walk
// itself is proven on both stores in shared/groups/keys; 129 rolls through
// keys.Repo take a minute on the emulator.)
func TestAMoneyApprovalWhoseRequestersRollChainIsTooLongToReadIsRefused(t *testing.T) {
	now := time.Unix(1_800_000_000, 0).UTC()
	clock := func() time.Time { return now }
	ctx := context.Background()
	st := teststores.Embedded.Open(t, clock)
	k := grow(t, st, now, "long")
	r := keys.NewRepo(st, clock)
	last := k["successor²"].ID
	for range keys.MaxRollChain - 3 {
		rolled, err := r.Roll(ctx, k["root"], last, now.Add(time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		last = rolled.Key.ID
	}
	repo := approvals.NewRepo(st, clock)
	acct := k["root"].AccountID
	decide := func() error {
		a, err := repo.Create(ctx, acct, nil, last, "managed-wallets", "wallets.transactions.create", json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = repo.Decide(ctx, acct, "", a.ID, "approve", nil, k["sibling"])
		return err
	}
	if err := decide(); err != nil {
		t.Fatalf("a chain of exactly %d keys: %v", keys.MaxRollChain, err)
	}
	if _, err := r.Roll(ctx, k["root"], last, now.Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	var ae *apierr.Error
	if err := decide(); !errors.As(err, &ae) || ae.Code != apierr.SelfApprovalDenied {
		t.Fatalf("a chain of %d keys: %v, want self_approval_denied", keys.MaxRollChain+1, err)
	}
}
