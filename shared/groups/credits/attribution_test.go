package credits_test

import (
	"context"
	"testing"

	"platformapi/shared/groups/credits"
)

// A context's cause is one value: naming what settles a hold keeps the
// request or the key work it was marked with, and a later mark replaces
// the earlier one.
func TestAContextsCauseKeepsItsRequestOrKeyWhenASettlementIsNamed(t *testing.T) {
	var noted int64
	reqAttr := credits.Attribution{RequestID: "req_1", KeyPath: []string{"key_a"}, Operation: "trading.orders.create"}
	req := testRequest{attr: reqAttr, noted: &noted}
	work := credits.Attribution{RequestID: "run_1", KeyPath: []string{"key_b"}, Operation: "runs.step"}
	bg := context.Background()
	for _, c := range []struct {
		name      string
		ctx       context.Context
		attr      credits.Attribution
		inRequest bool
		settledBy string
	}{
		{name: "none", ctx: bg, settledBy: "fallback"},
		{name: "request", ctx: credits.WithRequest(bg, req), attr: reqAttr, inRequest: true, settledBy: "fallback"},
		{name: "key work", ctx: credits.ForKey(bg, work), attr: work, settledBy: "fallback"},
		{name: "settled", ctx: credits.SettledBy(bg, "trading.orders.fill"), settledBy: "trading.orders.fill"},
		{name: "request settled", ctx: credits.SettledBy(credits.WithRequest(bg, req), "trading.orders.fill"), attr: reqAttr, inRequest: true, settledBy: "trading.orders.fill"},
		{name: "key work settled", ctx: credits.SettledBy(credits.ForKey(bg, work), "wallets.transactions.confirm"), attr: work, settledBy: "wallets.transactions.confirm"},
		{name: "key work over a request", ctx: credits.ForKey(credits.WithRequest(bg, req), work), attr: work, settledBy: "fallback"},
	} {
		cause := credits.CauseOf(c.ctx)
		if got := cause.Attribution(); got.RequestID != c.attr.RequestID || got.KeyID() != c.attr.KeyID() || got.Operation != c.attr.Operation {
			t.Errorf("%s: attribution %+v, want %+v", c.name, got, c.attr)
		}
		if (cause.Request() != nil) != c.inRequest {
			t.Errorf("%s: in a request %v, want %v", c.name, cause.Request() != nil, c.inRequest)
		}
		if got := cause.SettledBy("fallback"); got != c.settledBy {
			t.Errorf("%s: settled by %q, want %q", c.name, got, c.settledBy)
		}
	}
}
