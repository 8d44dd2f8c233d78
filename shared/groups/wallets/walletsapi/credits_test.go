package walletsapi_test

import (
	"context"
	"math/big"
	"testing"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// A confirmed send charges the price (0.1) exactly once; a send that fails
// on the way charges nothing.
func TestAConfirmedSendChargesThePriceOnceAndAFailedOneNothing(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, addr := newWallet(t, e, root, nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e17, "USDC": 1_000_000})
		// Two quotes of the whole balance: both simulate well now, but only
		// the first can be paid; the second fails when it is signed.
		whole, spent := e.Must(txQuote(e, root, id, freshAddress(), "USDC", "1000000"), 201), e.Must(txQuote(e, root, id, freshAddress(), "USDC", "1000000"), 201)
		credits := micro(e.Balance(root))
		ok := waitTx(t, e, root, id, e.Must(send(e, root, id, whole.Str("id")), 202).Str("id"))
		if ok.Str("status") != "confirmed" || micro(ok.Body["chargedCredits"].(float64)) != 100_000 {
			t.Fatalf("%s", ok.Raw)
		}
		if got := micro(e.Balance(root)); credits-got != 100_000 {
			t.Fatalf("credits %d → %d", credits, got)
		}
		bad := waitTx(t, e, root, id, e.Must(send(e, root, id, spent.Str("id")), 202).Str("id"))
		if bad.Str("status") != "failed" || micro(bad.Body["chargedCredits"].(float64)) != 0 || bad.Body["failure"] == nil {
			t.Fatalf("%s", bad.Raw)
		}
		// Reading them again charges nothing more.
		waitTx(t, e, root, id, ok.Str("id"))
		if got := micro(e.Balance(root)); credits-got != 100_000 {
			t.Fatalf("credits %d → %d", credits, got)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

// creditsPerDay on wallets.transactions.create caps a key's sends: past it
// a send is 429 limit_exceeded and creates nothing.
func TestCreditsPerDayCapsSends(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		child, _ := e.Child(root, map[string]any{"limits": map[string]any{"wallets.transactions.create": map[string]any{"creditsPerDay": 0.2}}})
		id, addr := newWallet(t, e, child, nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e17})
		for range 2 {
			e.Must(send(e, child, id, e.Must(txQuote(e, child, id, freshAddress(), "ETH", "1000"), 201).Str("id")), 202)
		}
		r := e.Must(send(e, child, id, e.Must(txQuote(e, child, id, freshAddress(), "ETH", "1000"), 201).Str("id")), 429, "limit_exceeded")
		if r.Header.Get("X-Service-Limit-Operation") != "wallets.transactions.create" {
			t.Fatalf("limit headers %v", r.Header)
		}
		if n := txCount(t, e, child, id); n != 2 {
			t.Fatalf("%d transactions", n)
		}
		// The root has no such limit.
		e.Must(send(e, root, id, e.Must(txQuote(e, root, id, freshAddress(), "ETH", "1000"), 201).Str("id")), 202)
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

// A native send moves the amount to the recipient and costs the wallet the
// amount plus gasUsed × effectiveGasPrice, to the wei.
func TestANativeSendCostsTheAmountPlusTheGasToTheWei(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, addr := newWallet(t, e, root, nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e18})
		to := freshAddress()
		amount := big.NewInt(123_456_789_012_345)
		before := balance(t, e, root, id, "ETH")
		q := e.Must(txQuote(e, root, id, to, "ETH", amount.String()), 201)
		if tx := q.Body["transaction"].(map[string]any); tx["gas"] != 21000.0 || tx["value"] != amount.String() || tx["to"] != to.Hex() {
			t.Fatalf("quoted %v", tx)
		}
		done := waitTx(t, e, root, id, e.Must(send(e, root, id, q.Str("id")), 202).Str("id"))
		fee, _ := done.Body["networkFee"].(map[string]any)
		if done.Str("status") != "confirmed" || fee["gasUsed"] == nil {
			t.Fatalf("%s", done.Raw)
		}
		gasUsed, price := new(big.Int).SetUint64(uint64(fee["gasUsed"].(float64))), units(fee["effectiveGasPrice"].(string))
		paid := new(big.Int).Mul(gasUsed, price)
		if paid.Cmp(units(fee["amount"].(string))) != 0 {
			t.Fatalf("%s", done.Raw)
		}
		if got := balance(t, e, root, id, "ETH"); new(big.Int).Sub(before, got).Cmp(new(big.Int).Add(amount, paid)) != 0 {
			t.Fatalf("ETH %s → %s: amount %s, gas %s", before, got, amount, paid)
		}
		if got, err := dev.Client().BalanceAt(context.Background(), to, nil); err != nil || got.Cmp(amount) != 0 {
			t.Fatalf("the recipient has %v (%v)", got, err)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
