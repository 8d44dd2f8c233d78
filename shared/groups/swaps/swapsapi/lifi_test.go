package swapsapi_test

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/groups/swaps/lifi/lififake"
	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// On a chain without a local pool the API quotes through the
// LI.FI-compatible router (here its local fake): the route and its
// exact-amount approval come from the router, and the router's refusals
// become the API's errors.
func TestAChainWithoutAPoolIsQuotedByTheLiFiRouter(t *testing.T) {
	fake := lififake.New()
	t.Cleanup(fake.Close)
	usdcBase := common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
	weth := common.HexToAddress("0x4200000000000000000000000000000000000006")
	fake.SetTokens(8453, lififake.Token{Address: usdcBase.Hex(), Symbol: "USDC", Decimals: 6, ChainID: 8453, Name: "USD Coin"},
		lififake.Token{Address: weth.Hex(), Symbol: "WETH", Decimals: 18, ChainID: 8453, Name: "Wrapped Ether"})
	e := apitest.New(t, apitest.Options{Parts: []apitest.Part{chaintest.On(chaintest.Shared(t))}, Env: map[string]string{"LIFI_BASE_URL": fake.URL()}})
	root, _ := e.RootKey(10, nil)
	me := common.HexToAddress("0x00000000000000000000000000000000000a11ce")
	body := map[string]any{"fromAddress": me.Hex(), "fromChainId": 8453, "toChainId": 8453,
		"fromToken": usdcBase.Hex(), "toToken": weth.Hex(), "fromAmount": "2500000000", "slippageBps": 50}

	tokens := e.Must(get(e, root, "/swaps/tokens?chainId=8453"), 200)
	if n := len(tokens.Body["data"].([]any)); n != 2 {
		t.Fatalf("tokens %s", tokens.Raw)
	}
	q := e.Must(post(e, root, "/swaps/quote", body), 201)
	approval := q.Body["approval"].(map[string]any)
	if q.Str("router") != "lifi" || approval["required"] != true || approval["amount"] != "2500000000" || approval["token"] != usdcBase.Hex() {
		t.Fatalf("quote %s", q.Raw)
	}
	p := e.Do(apitest.Req{Method: "POST", Path: "/v1/swaps/prepare", Key: root, Body: map[string]any{"quoteId": q.Str("id")}})
	e.Must(p, 200)
	if tx := p.Body["transaction"].(map[string]any); tx["to"] != lififake.Diamond || tx["from"] != me.Hex() {
		t.Fatalf("prepared %s", p.Raw)
	}

	fake.FailNext(1, lififake.RateLimited)
	r := post(e, root, "/swaps/quote", body)
	if r.Status != 429 || r.Str("code") != "upstream_rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("rate limited: %d %s", r.Status, r.Raw)
	}
	fake.FailNext(1, lififake.NoRoute)
	e.Must(post(e, root, "/swaps/quote", body), 422, "no_route")
	fake.FailNext(1, lififake.ServerError)
	e.Must(post(e, root, "/swaps/quote", body), 503, "service_unavailable")
}
