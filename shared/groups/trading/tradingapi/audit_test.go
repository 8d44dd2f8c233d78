package tradingapi_test

import (
	"context"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/audit"
	"platformapi/shared/groups/keys"
	"platformapi/shared/harness/apitest"
)

// ordersAudited is what the audit events of trading.orders.create the
// account's root key sees charge, in micro-credits, and how many there are.
func ordersAudited(t *testing.T, e *apitest.Env, root string, since time.Time) (charged int64, events int) {
	t.Helper()
	ctx := context.Background()
	if err := e.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	chain, _, err := keys.NewRepo(e.Store, e.Clock.Now).Authenticate(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	k := chain[len(chain)-1]
	f := audit.Filter{Viewer: audit.Viewer{AccountID: k.AccountID, KeyPath: []string{k.ID}},
		Since: since, Until: e.Clock.Now().Add(time.Millisecond), Operation: "trading.orders.create", Limit: 100}
	for {
		evs, next, err := audit.NewRepo(e.Store, e.Clock.Now).List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			charged += ev.ChargedMicro
			events++
		}
		if next == "" {
			return charged, events
		}
		f.Cursor = next
	}
}

// An order whose answer was never stored, though its audit event was
// written (storing the answer failed, or the stored answer expired), is
// answered to its retry from the order its dedupe key finds: the retry
// owes the order's credit hold to the first attempt's event, which exists
// already, so the one charge is audited once, not once per attempt.
func TestARetryAfterALostAnswerAuditsTheOrdersChargeOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		since := e.Clock.Now()
		root, rec := e.RootKey(10, nil)
		key := apitest.Idem()
		body := map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": "1", "timeInForce": "ioc"}
		send := func() *apitest.Resp {
			return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/trading/orders", Key: root, Idem: key, Body: body}), 201)
		}
		first := order(t, send())
		if err := e.Store.Delete(context.Background(), store.Key{PK: "idem#" + rec.Str("id") + "#" + key, SK: "idem"}); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Second)
		again := send()
		if order(t, again).ID != first.ID || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry after a lost answer: %s %v", again.Raw, again.Header)
		}
		spent := 10_000_000 - int64(e.Balance(root)*1_000_000+0.5)
		charged, events := ordersAudited(t, e, root, since)
		if spent != 100_000 || charged != spent {
			t.Fatalf("the account spent %d micro-credits on the order; its %d audit events charge %d", spent, events, charged)
		}
		if events != 2 {
			t.Fatalf("%d audit events of the order's two attempts; want one each", events)
		}
	})
}
