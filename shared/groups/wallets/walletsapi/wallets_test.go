package walletsapi_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

func TestMain(m *testing.M) { chaintest.Main(m) }

func post(e *apitest.Env, key, path string, body any, headers map[string]string) *apitest.Resp {
	return e.Do(apitest.Req{Method: "POST", Path: "/v1" + path, Key: key, Idem: apitest.Idem(), Body: body, Headers: headers})
}

func get(e *apitest.Env, key, path string, headers map[string]string) *apitest.Resp {
	return e.Do(apitest.Req{Method: "GET", Path: "/v1" + path, Key: key, Headers: headers})
}

func units(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("not an integer: " + s)
	}
	return n
}

// balance reads one asset's balance of a wallet through the API.
func balance(t *testing.T, e *apitest.Env, key, walletID, symbol string) *big.Int {
	t.Helper()
	r := e.Must(get(e, key, "/wallets/"+walletID+"/balances", nil), 200)
	for _, b := range r.Body["data"].([]any) {
		m := b.(map[string]any)
		if m["symbol"] == symbol {
			return units(m["amount"].(string))
		}
	}
	t.Fatalf("no %s in %s", symbol, r.Raw)
	return nil
}

// waitTx polls a transaction until it is final.
func waitTx(t *testing.T, e *apitest.Env, key, walletID, txID string) *apitest.Resp {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := e.Must(get(e, key, "/wallets/"+walletID+"/transactions/"+txID, nil), 200)
		switch r.Str("status") {
		case "confirmed", "failed", "rejected", "expired":
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction not final: %s", r.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestASendOfUSDCMovesExactlyTheAmountAndThePaidFee(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		w := e.Must(post(e, root, "/wallets", map[string]any{"label": "ops"}, nil), 201)
		id, addr := w.Str("id"), common.HexToAddress(w.Str("address"))
		ctx := context.Background()
		if _, err := dev.Faucet().Fund(ctx, addr, "ETH", big.NewInt(1e18)); err != nil {
			t.Fatal(err)
		}
		if _, err := dev.Faucet().Fund(ctx, addr, "USDC", big.NewInt(100_000_000)); err != nil {
			t.Fatal(err)
		}
		to := common.BigToAddress(big.NewInt(time.Now().UnixNano()))
		ethBefore, usdcBefore := balance(t, e, root, id, "ETH"), balance(t, e, root, id, "USDC")
		q := e.Must(post(e, root, "/wallets/"+id+"/transactions/quote", map[string]any{"chainId": 1337, "to": to.Hex(), "asset": "USDC", "amount": "1500000"}, nil), 201)
		if q.Body["simulation"].(map[string]any)["success"] != true || q.Body["policy"].(map[string]any)["decision"] != "allow" {
			t.Fatalf("quote %s", q.Raw)
		}
		tx := e.Must(post(e, root, "/wallets/"+id+"/transactions", map[string]any{"quoteId": q.Str("id")}, nil), 202)
		done := waitTx(t, e, root, id, tx.Str("id"))
		if done.Str("status") != "confirmed" || done.Body["chargedCredits"] != 0.1 {
			t.Fatalf("transaction %s", done.Raw)
		}
		fee := units(done.Body["networkFee"].(map[string]any)["amount"].(string))
		if got := balance(t, e, root, id, "USDC"); new(big.Int).Sub(usdcBefore, got).Cmp(big.NewInt(1_500_000)) != 0 {
			t.Fatalf("USDC %s → %s", usdcBefore, got)
		}
		if got := balance(t, e, root, id, "ETH"); new(big.Int).Sub(ethBefore, got).Cmp(fee) != 0 {
			t.Fatalf("ETH %s → %s, fee %s", ethBefore, got, fee)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
