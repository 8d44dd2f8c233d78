package swaps

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/groups/wallets"
	"platformapi/shared/groups/wallets/wallettest"
)

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
			env := wallettest.Open(t, b)
			st, nets := env.Store, env.Networks
			f, out := &faulty{Store: st}, &wallettest.Outbox{}
			// Not wired: the test refreshes the swap itself.
			ws := wallets.New(wallets.Config{Store: f, Sealer: env.Sealer, Networks: nets, Outbox: out})
			svc := New(Config{Store: f, Wallets: ws, Outbox: out, Router: &Dispatch{Local: &Pool{Networks: nets, Now: time.Now}}, PriceMicro: 100_000})
			sc := wallets.Scope{AccountID: wallettest.AccountID}
			w, err := ws.Create(ctx, sc, wallets.WalletCreateRequest{})
			if err != nil {
				t.Fatal(err)
			}
			env.Fund(t, w.Address)
			events := func(event string) int { return wallettest.Events(t, st, event) }
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
			if n, d := events("swap."+SwapPending), out.Dispatched.Load(); n != 1 || d != 0 {
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
