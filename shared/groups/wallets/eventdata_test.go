package wallets

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/chain/devchain"
)

// dataOutboxPK is where dataOutbox keeps the events it records.
const dataOutboxPK = "evo#data"

// dataOutbox records each event with its data, as encoded, in the
// transaction it is handed to.
type dataOutbox struct{ n atomic.Int64 }

func (o *dataOutbox) Outboxed(_, _, event string, data any) ([]store.Op, func(context.Context), error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, nil, err
	}
	it := store.NewItem(store.Key{PK: dataOutboxPK, SK: fmt.Sprintf("%06d", o.n.Add(1))})
	it["event"], it["data"] = event, string(b)
	return []store.Op{store.PutOp(it)}, func(context.Context) {}, nil
}

// Every wallet.transaction.<status> event names its transaction, and each
// transaction's final status has exactly one event, however many
// advancers (the worker, reads, the recheck pass) race on it and whichever
// way it fails.
func TestEveryTransactionEventNamesItsTransactionUnderRacingAdvancers(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			fx := outboxEnv(t, b)
			out := &dataOutbox{}
			fx.s.outbox = out
			ctx := context.Background()
			var txs []string
			for i := range 6 {
				q, err := fx.s.QuoteTransaction(ctx, fx.sc, fx.w.ID, TxQuoteRequest{ChainID: devchain.ChainID,
					To: "0x00000000000000000000000000000000000c0ffe", Asset: "USDC", Amount: "1500000"})
				if err != nil {
					t.Fatal(err)
				}
				tx, _, err := fx.s.CreateTransaction(ctx, fx.sc, fx.w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", fmt.Sprintf("call-%d", i))
				if err != nil {
					t.Fatal(err)
				}
				txs = append(txs, tx.ID)
			}
			deadline := time.Now().Add(60 * time.Second)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(deadline) {
						open := 0
						for _, id := range txs {
							switch g % 3 {
							case 0:
								if more, _ := fx.s.Advance(ctx, fx.sc, fx.w.ID, id); more {
									open++
								}
							case 1:
								if v, err := fx.s.GetTransaction(ctx, fx.sc, fx.w.ID, id); err == nil && !(&txRec{WalletTransaction: *v}).final() {
									open++
								}
							default:
								_ = fx.s.Recheck(ctx)
								if v, err := fx.s.PeekTransaction(ctx, fx.sc, fx.w.ID, id); err == nil && !(&txRec{WalletTransaction: *v}).final() {
									open++
								}
							}
						}
						if open == 0 {
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
				}()
			}
			wg.Wait()
			page, err := fx.st.Query(ctx, store.Query{PK: dataOutboxPK})
			if err != nil {
				t.Fatal(err)
			}
			byTx := map[string][]string{}
			for _, it := range page.Items {
				var d struct{ ID, Status string }
				if err := json.Unmarshal([]byte(it.String("data")), &d); err != nil || d.ID == "" {
					t.Errorf("event %s names no transaction: %s", it.String("event"), it.String("data"))
				}
				byTx[d.ID] = append(byTx[d.ID], it.String("event"))
			}
			for _, id := range txs {
				v, err := fx.s.PeekTransaction(ctx, fx.sc, fx.w.ID, id)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, ev := range byTx[id] {
					if ev == "wallet.transaction."+v.Status {
						n++
					}
				}
				t.Logf("%s %s %v", id, v.Status, byTx[id])
				if n != 1 {
					t.Errorf("%s is %s with %d events of it: %v", id, v.Status, n, byTx[id])
				}
			}
		})
	}
}
