package swaps

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/chain"
	"platformapi/shared/chain/devchain"
	"platformapi/shared/credits"
	"platformapi/shared/envelope/localkey"
	"platformapi/shared/store"
	"platformapi/shared/testkit/teststores"
	"platformapi/shared/wallets"
)

const testOutboxPK = "evo#test"

// memOutbox records each event as an item of the service's own store, in
// the transaction it is handed to, as webhooks.Repo's outbox does, and
// counts the fan-outs that ran.
type memOutbox struct{ n, dispatched atomic.Int64 }

func (o *memOutbox) Outboxed(_, _, event string, _ any) ([]store.Op, func(context.Context), error) {
	it := store.NewItem(store.Key{PK: testOutboxPK, SK: fmt.Sprintf("%s#%04d", event, o.n.Add(1))})
	return []store.Op{store.PutOp(it)}, func(context.Context) { o.dispatched.Add(1) }, nil
}

// faulty fails the next transaction that writes a swap in status: abort
// before anything is written, or (kill) after the commit, as a process
// killed before its answer and its dispatch does.
type faulty struct {
	store.Store
	mu     sync.Mutex
	status string
	kill   bool
}

func (f *faulty) arm(status string, kill bool) {
	f.mu.Lock()
	f.status, f.kill = status, kill
	f.mu.Unlock()
}

// armed says whether the armed fault is still to happen.
func (f *faulty) armed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status != ""
}

func (f *faulty) Transact(ctx context.Context, ops []store.Op) error {
	f.mu.Lock()
	hit, kill := false, f.kill
	for _, op := range ops {
		if f.status != "" && op.Kind == store.OpPut && strings.HasPrefix(op.Key.SK, "swp#") && op.Item.String("status") == f.status {
			hit, f.status = true, ""
			break
		}
	}
	f.mu.Unlock()
	if hit && !kill {
		return errors.New("aborted before the commit")
	}
	err := f.Store.Transact(ctx, ops)
	if hit && err == nil {
		return errors.New("killed after the commit")
	}
	return err
}

// A swap's swap.<status> events commit with the swap's changes: an
// execution or a refresh that fails to commit leaves no event, one whose
// process dies after the commit (its fan-out never run) leaves exactly one
// for the outbox sweep, and the retry that replays the execution adds none.
func TestASwapsEventsExistExactlyWhenItsChangesDo(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dir, err := os.MkdirTemp("", "swaps-outbox-")
			if err != nil {
				t.Fatal(err)
			}
			dev, err := devchain.Open(ctx, dir, devchain.Options{})
			if err != nil {
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
			if err := st.Transact(ctx, credits.OpenAccountOps("acct_1", 10_000_000, "test", time.Now())); err != nil {
				t.Fatal(err)
			}
			f, out := &faulty{Store: st}, &memOutbox{}
			// Not wired: the test refreshes the swap itself.
			ws := wallets.New(wallets.Config{Store: f, Sealer: sealer, Networks: nets, Outbox: out})
			svc := New(Config{Store: f, Wallets: ws, Outbox: out, Router: &Dispatch{Local: &Pool{Networks: nets, Now: time.Now}}, PriceMicro: 100_000})
			sc := wallets.Scope{AccountID: "acct_1"}
			w, err := ws.Create(ctx, sc, wallets.WalletCreateRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for asset, amount := range map[string]*big.Int{"ETH": big.NewInt(1e18), "USDC": big.NewInt(5_000_000)} {
				if _, err := dev.Faucet().Fund(ctx, common.HexToAddress(w.Address), asset, amount); err != nil {
					t.Fatal(err)
				}
			}
			events := func(event string) int {
				page, err := st.Query(ctx, store.Query{PK: testOutboxPK, Prefix: event + "#"})
				if err != nil {
					t.Fatal(err)
				}
				return len(page.Items)
			}
			q, err := svc.Quote(ctx, sc, SwapQuoteRequest{WalletID: &w.ID, FromChainID: devchain.ChainID, ToChainID: devchain.ChainID,
				FromToken: "USDC", ToToken: "WETH", FromAmount: "1000000"})
			if err != nil {
				t.Fatal(err)
			}
			f.arm(SwapPending, false)
			if _, _, err := svc.Execute(ctx, sc, ExecuteRequest{QuoteID: q.ID}, "key_1", "call-1"); err == nil {
				t.Fatal("the aborted execution answered")
			}
			if n := events("swap." + SwapPending); n != 0 {
				t.Fatalf("an aborted execution left %d events", n)
			}
			f.arm(SwapPending, true)
			if _, _, err := svc.Execute(ctx, sc, ExecuteRequest{QuoteID: q.ID}, "key_1", "call-1"); err == nil {
				t.Fatal("the killed execution answered")
			}
			if n, d := events("swap."+SwapPending), out.dispatched.Load(); n != 1 || d != 0 {
				t.Fatalf("%d pending events, %d dispatched; want the one committed with the swap, left to the sweep", n, d)
			}
			// The first refresh that would record the swap's end, by the
			// replay's read or by the test, is aborted.
			f.arm(SwapDone, false)
			sw, replayed, err := svc.Execute(ctx, sc, ExecuteRequest{QuoteID: q.ID}, "key_1", "call-1")
			if err != nil || !replayed {
				t.Fatalf("retry: %+v %v %v", sw, replayed, err)
			}
			if n := events("swap." + SwapPending); n != 1 {
				t.Fatalf("%d pending events after the replay; want the one committed with the swap", n)
			}
			// The swap's transactions end; the refresh that records the
			// swap's end was aborted once, is then killed after its commit,
			// and a later read finds it done.
			last := sw.Transactions[len(sw.Transactions)-1].TransactionID
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				for _, tx := range sw.Transactions {
					if _, err := ws.Advance(ctx, sc, w.ID, tx.TransactionID); err != nil {
						t.Fatal(err)
					}
				}
				charged, err := ws.SwapCharged(ctx, sc, w.ID, last)
				if err != nil {
					t.Fatal(err)
				}
				if charged != "0" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the swap's transactions never settled")
				}
			}
			if f.armed() {
				if r, err := svc.Refresh(ctx, sc, sw.ID); err == nil {
					t.Fatalf("the aborted refresh answered %+v", r)
				}
			}
			if n := events("swap." + SwapDone); n != 0 {
				t.Fatalf("an aborted refresh left %d events", n)
			}
			if cur, _, err := svc.loadSwap(ctx, sc, sw.ID); err != nil || cur.Status == SwapDone {
				t.Fatalf("after the aborted refresh: %+v %v", cur, err)
			}
			f.arm(SwapDone, true)
			if _, err := svc.Refresh(ctx, sc, sw.ID); err == nil {
				t.Fatal("the killed refresh answered")
			}
			got, err := svc.Get(ctx, sc, sw.ID)
			if err != nil || got.Status != SwapDone {
				t.Fatalf("%+v %v", got, err)
			}
			if n := events("swap." + SwapDone); n != 1 {
				t.Fatalf("%d done events; want the one committed with the swap's end", n)
			}
		})
	}
}
