// Package wallettest is the setup the tests of wallets and of swaps share:
// a fresh local chain, a store of one backend holding a funded account, a
// sealer, and an outbox that records each event as an item of that store.
// It imports neither domain, so the wallets' own tests can use it.
package wallettest

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/adapters/envelope/localkey"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/groups/credits"
)

// AccountID is the account Open funds with AccountCredits micro-credits.
const (
	AccountID      = "acct_1"
	AccountCredits = 10_000_000
)

// Env is a chain and a store for one test.
type Env struct {
	Chain    *devchain.Chain
	Networks *chain.Networks
	Store    store.Store
	Sealer   *localkey.Sealer
}

// Open starts a fresh local chain and opens a store of b holding
// AccountID; both end with the test.
func Open(t *testing.T, b teststores.Backend) *Env {
	t.Helper()
	// Removed by hand once the chain closed, whatever the removal's
	// outcome: t.TempDir fails the test when a file is left behind.
	dir, err := os.MkdirTemp("", "wallettest-")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := devchain.Open(context.Background(), dir, devchain.Options{})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close(); os.RemoveAll(dir) })
	nets, err := chain.NewNetworks(dev.Network())
	if err != nil {
		t.Fatal(err)
	}
	st := b.Open(t, time.Now)
	sealer, err := localkey.Open(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Transact(context.Background(), credits.OpenAccountOps(AccountID, AccountCredits, "test", time.Now())); err != nil {
		t.Fatal(err)
	}
	return &Env{Chain: dev, Networks: nets, Store: st, Sealer: sealer}
}

// Fund gives address 1 ETH, for gas, and 5 USDC on the chain.
func (e *Env) Fund(t *testing.T, address string) {
	t.Helper()
	for asset, amount := range map[string]*big.Int{"ETH": big.NewInt(1e18), "USDC": big.NewInt(5_000_000)} {
		if _, err := e.Chain.Faucet().Fund(context.Background(), common.HexToAddress(address), asset, amount); err != nil {
			t.Fatal(err)
		}
	}
}

// outboxPK is the partition Outbox records its events in.
const outboxPK = "evo#test"

// Outbox records each event as an item of the domain's own store, in the
// transaction it is handed to, as webhooks.Repo does, and counts the
// fan-outs that ran.
type Outbox struct {
	n          atomic.Int64
	Dispatched atomic.Int64
}

// Outboxed is the event's item as the transaction's member and a fan-out
// that counts itself.
func (o *Outbox) Outboxed(_, _, event string, _ any) ([]store.Op, func(context.Context), error) {
	it := store.NewItem(store.Key{PK: outboxPK, SK: fmt.Sprintf("%s#%04d", event, o.n.Add(1))})
	return []store.Op{store.PutOp(it)}, func(context.Context) { o.Dispatched.Add(1) }, nil
}

// Events is how many events named event Outbox recorded in st.
func Events(t *testing.T, st store.Store, event string) int {
	t.Helper()
	page, err := st.Query(context.Background(), store.Query{PK: outboxPK, Prefix: event + "#"})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Items)
}
