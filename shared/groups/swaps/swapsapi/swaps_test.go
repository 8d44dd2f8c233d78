package swapsapi_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/base/chain"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

func TestMain(m *testing.M) { chaintest.Main(m) }

func post(e *apitest.Env, key, path string, body any) *apitest.Resp {
	return e.Do(apitest.Req{Method: "POST", Path: "/v1" + path, Key: key, Idem: apitest.Idem(), Body: body})
}

func get(e *apitest.Env, key, path string) *apitest.Resp {
	return e.Do(apitest.Req{Method: "GET", Path: "/v1" + path, Key: key})
}

func units(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("not an integer: " + s)
	}
	return n
}

func usdc(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1_000_000)) }

// fundedWallet is a new wallet of key with 1 ETH and usdc USDC.
func fundedWallet(t *testing.T, e *apitest.Env, dev *devchain.Chain, key string, usdcUnits *big.Int) (string, common.Address) {
	t.Helper()
	w := e.Must(post(e, key, "/wallets", map[string]any{}), 201)
	addr := common.HexToAddress(w.Str("address"))
	fund(t, dev, addr, usdcUnits)
	return w.Str("id"), addr
}

func fund(t *testing.T, dev *devchain.Chain, addr common.Address, usdcUnits *big.Int) {
	t.Helper()
	ctx := context.Background()
	if _, err := dev.Faucet().Fund(ctx, addr, "ETH", big.NewInt(1e18)); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Faucet().Fund(ctx, addr, "USDC", usdcUnits); err != nil {
		t.Fatal(err)
	}
}

// balances reads a wallet's balances by symbol through the API.
func balances(t *testing.T, e *apitest.Env, key, walletID string) map[string]*big.Int {
	t.Helper()
	r := e.Must(get(e, key, "/wallets/"+walletID+"/balances"), 200)
	out := map[string]*big.Int{}
	for _, b := range r.Body["data"].([]any) {
		m := b.(map[string]any)
		out[m["symbol"].(string)] = units(m["amount"].(string))
	}
	return out
}

func quote(t *testing.T, e *apitest.Env, key, walletID string, amount *big.Int, slippageBps int) *apitest.Resp {
	t.Helper()
	return e.Must(post(e, key, "/swaps/quote", map[string]any{"walletId": walletID, "fromChainId": 1337, "toChainId": 1337,
		"fromToken": "USDC", "toToken": "WETH", "fromAmount": amount.String(), "slippageBps": slippageBps}), 201)
}

// waitSwap polls a swap until it is done or failed.
func waitSwap(t *testing.T, e *apitest.Env, key, id string) *apitest.Resp {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := e.Must(get(e, key, "/swaps/"+id), 200)
		if s := r.Str("status"); s == "done" || s == "failed" {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("swap not final: %s", r.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// paidFees sums what the swap's wallet transactions paid in gas.
func paidFees(t *testing.T, e *apitest.Env, key, walletID string, sw *apitest.Resp) *big.Int {
	t.Helper()
	sum := new(big.Int)
	for _, x := range sw.Body["transactions"].([]any) {
		id := x.(map[string]any)["transactionId"].(string)
		tx := e.Must(get(e, key, "/wallets/"+walletID+"/transactions/"+id), 200)
		if amt, ok := tx.Body["networkFee"].(map[string]any)["amount"].(string); ok {
			sum.Add(sum, units(amt))
		}
	}
	return sum
}

func TestASwapFromAWalletMovesBothTokensByExactlyWhatTheReceiptsSay(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, _ := fundedWallet(t, e, dev, root, usdc(5_000))
		before := balances(t, e, root, id)
		q := quote(t, e, root, id, usdc(2_500), 50)
		if q.Body["approval"].(map[string]any)["required"] != true || q.Body["approval"].(map[string]any)["amount"] != usdc(2_500).String() {
			t.Fatalf("a fresh wallet needs an exact-amount approval: %s", q.Raw)
		}
		sw := e.Must(post(e, root, "/swaps", map[string]any{"quoteId": q.Str("id")}), 202)
		if sw.Str("status") != "pending" || len(sw.Body["transactions"].([]any)) != 2 {
			t.Fatalf("swap %s", sw.Raw)
		}
		done := waitSwap(t, e, root, sw.Str("id"))
		if done.Str("status") != "done" || done.Body["chargedCredits"] != 0.1 {
			t.Fatalf("swap %s", done.Raw)
		}
		// The swap is charged once: its transactions do not show the
		// swap's charge as their own.
		for _, x := range done.Body["transactions"].([]any) {
			tx := e.Must(get(e, root, "/wallets/"+id+"/transactions/"+x.(map[string]any)["transactionId"].(string)), 200)
			if tx.Body["chargedCredits"] != 0.0 || tx.Str("swapId") != sw.Str("id") {
				t.Fatalf("a swap's transaction says it was charged: %s", tx.Raw)
			}
		}
		got := units(done.Str("toAmount"))
		if got.Cmp(units(q.Str("toAmountMin"))) < 0 {
			t.Fatalf("received %s < toAmountMin %s", got, q.Str("toAmountMin"))
		}
		after := balances(t, e, root, id)
		fees := paidFees(t, e, root, id, done)
		if d := new(big.Int).Sub(before["USDC"], after["USDC"]); d.Cmp(usdc(2_500)) != 0 {
			t.Fatalf("USDC moved by %s", d)
		}
		if d := new(big.Int).Sub(after["WETH"], before["WETH"]); d.Cmp(got) != 0 {
			t.Fatalf("WETH moved by %s, the swap says %s", d, got)
		}
		if d := new(big.Int).Sub(before["ETH"], after["ETH"]); d.Cmp(fees) != 0 || fees.Sign() <= 0 {
			t.Fatalf("ETH moved by %s, fees %s", d, fees)
		}
		again := post(e, root, "/swaps", map[string]any{"quoteId": q.Str("id")})
		if again.Status != 409 || again.Str("code") != "quote_already_used" {
			t.Fatalf("a quote is used once: %d %s", again.Status, again.Raw)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

func TestAPriceMovedBeyondTheSlippageFailsTheSwapAndSpendsOnlyGas(t *testing.T) {
	dev := chaintest.Shared(t)
	e := apitest.New(t, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
	root, _ := e.RootKey(10, nil)
	id, _ := fundedWallet(t, e, dev, root, usdc(1_000))
	whale, _ := fundedWallet(t, e, dev, root, usdc(200_000))
	q := quote(t, e, root, id, usdc(1_000), 1)
	// Someone else's large buy of WETH moves the price against the quote.
	move := e.Must(post(e, root, "/swaps", map[string]any{"quoteId": quote(t, e, root, whale, usdc(200_000), 100).Str("id")}), 202)
	if r := waitSwap(t, e, root, move.Str("id")); r.Str("status") != "done" {
		t.Fatalf("the move: %s", r.Raw)
	}
	before := balances(t, e, root, id)
	sw := e.Must(post(e, root, "/swaps", map[string]any{"quoteId": q.Str("id")}), 202)
	done := waitSwap(t, e, root, sw.Str("id"))
	if done.Str("status") != "failed" || done.Str("substatus") != "slippage_exceeded" || done.Body["chargedCredits"] != 0.0 {
		t.Fatalf("swap %s", done.Raw)
	}
	after := balances(t, e, root, id)
	fees := paidFees(t, e, root, id, done)
	if after["USDC"].Cmp(before["USDC"]) != 0 || after["WETH"].Cmp(before["WETH"]) != 0 {
		t.Fatalf("tokens moved: %v → %v", before, after)
	}
	if d := new(big.Int).Sub(before["ETH"], after["ETH"]); d.Cmp(fees) != 0 {
		t.Fatalf("ETH moved by %s, fees %s", d, fees)
	}
}

// sendRaw signs and sends an unsigned transaction of the API with an
// outside key, and waits for it to be mined.
func sendRaw(t *testing.T, dev *devchain.Chain, key *ecdsa.PrivateKey, u map[string]any) common.Hash {
	t.Helper()
	ctx := context.Background()
	c := dev.Client()
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := c.PendingNonceAt(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	to := common.HexToAddress(u["to"].(string))
	gas := uint64(u["gas"].(float64)) // the prepared limit must be enough
	if gas == 0 {
		t.Fatalf("no gas limit prepared: %v", u)
	}
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: nonce, GasTipCap: big.NewInt(1),
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), big.NewInt(1)), Gas: gas, To: &to,
		Value: units(u["value"].(string)), Data: hexutil.MustDecode(u["data"].(string))})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(big.NewInt(1337)), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendTransaction(ctx, signed); err != nil {
		t.Fatal(err)
	}
	if r, err := devchain.WaitMined(ctx, c, signed.Hash()); err != nil || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("mined %v %v", r, err)
	}
	return signed.Hash()
}

func TestAPreparedSwapSentByAnOutsideKeyIsFollowedThroughItsRoute(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		key, _ := crypto.GenerateKey()
		me := crypto.PubkeyToAddress(key.PublicKey)
		fund(t, dev, me, usdc(100))
		q := e.Must(post(e, root, "/swaps/quote", map[string]any{"fromAddress": me.Hex(), "fromChainId": 1337, "toChainId": 1337,
			"fromToken": "USDC", "toToken": "WETH", "fromAmount": usdc(100).String()}), 201)
		if r := post(e, root, "/swaps", map[string]any{"quoteId": q.Str("id")}); r.Status != 400 {
			t.Fatalf("an address's quote is not executed with our keys: %d %s", r.Status, r.Raw)
		}
		p := e.Do(apitest.Req{Method: "POST", Path: "/v1/swaps/prepare", Key: root, Body: map[string]any{"quoteId": q.Str("id")}})
		e.Must(p, 200)
		routeID := p.Str("routeId")
		if r := e.Must(get(e, root, "/swaps/routes/"+routeID), 200); r.Str("status") != "not_found" {
			t.Fatalf("route before sending: %s", r.Raw)
		}
		approval, ok := p.Body["approvalTransaction"].(map[string]any)
		if !ok {
			t.Fatalf("a fresh address needs an approval first: %s", p.Raw)
		}
		approvalHash := sendRaw(t, dev, key, approval)
		if r := get(e, root, "/swaps/routes/"+routeID+"?txHash="+approvalHash.Hex()); r.Status != 422 || r.Str("code") != "transaction_mismatch" {
			t.Fatalf("the approval is not the route's transaction: %d %s", r.Status, r.Raw)
		}
		hash := sendRaw(t, dev, key, p.Body["transaction"].(map[string]any))
		st := e.Must(get(e, root, "/swaps/routes/"+routeID+"?txHash="+hash.Hex()), 200)
		recv := st.Body["receiving"].(map[string]any)
		if st.Str("status") != "done" || units(recv["amount"].(string)).Cmp(units(q.Str("toAmountMin"))) < 0 {
			t.Fatalf("route %s", st.Raw)
		}
		out, err := dev.Client().CallContract(context.Background(), wethBalanceCall(dev, me), nil)
		if err != nil {
			t.Fatal(err)
		}
		weth := new(big.Int).SetBytes(out)
		if weth.Cmp(units(recv["amount"].(string))) != 0 {
			t.Fatalf("the address holds %s WETH, the route says %s arrived", weth, recv["amount"])
		}
		if r := e.Must(get(e, root, "/swaps/routes/"+routeID), 200); r.Str("status") != "done" {
			t.Fatalf("the accepted hash is remembered: %s", r.Raw)
		}
		other, _ := e.RootKey(10, nil)
		if r := get(e, other, "/swaps/routes/"+routeID); r.Status != 404 {
			t.Fatalf("another account's route: %d", r.Status)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

func wethBalanceCall(dev *devchain.Chain, who common.Address) ethereum.CallMsg {
	return ethereum.CallMsg{To: &dev.WETH, Data: chain.ERC20Call("balanceOf", who)}
}
