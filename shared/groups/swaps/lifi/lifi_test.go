package lifi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"platformapi/shared/groups/swaps"
	"platformapi/shared/groups/swaps/lifi/lififake"
)

const apiKey = "lifi-test-key-7f3a9c"

var (
	usdc   = common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	weth   = common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")
	wallet = common.HexToAddress("0x52908400098527886E0F7030069857D2E4169EE7")
	other  = common.HexToAddress("0x8617E340B3D01FA5F11F306F4090FD50E238070D")
)

func newRouter(t *testing.T) (*Router, *lififake.Fake) {
	t.Helper()
	f := lififake.New()
	t.Cleanup(f.Close)
	f.RequireAPIKey(apiKey)
	return New(Config{BaseURL: f.URL(), APIKey: apiKey, Integrator: "platformapi",
		HTTPClient: &http.Client{Timeout: 2 * time.Second}}), f
}

func amt(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

// asJSON compares values holding *big.Int, which reflect.DeepEqual cannot:
// equal numbers may differ in their internal slices.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func erc20Request() swaps.QuoteRequest {
	return swaps.QuoteRequest{FromChainID: 1, ToChainID: 1, FromToken: usdc, ToToken: weth,
		FromAmount: amt("1000000000"), FromAddress: wallet, SlippageBps: 50}
}

func TestQuoteMapsEveryField(t *testing.T) {
	r, f := newRouter(t)
	f.SetRate(3, 2)
	before := time.Now()
	got, err := r.Quote(context.Background(), erc20Request())
	if err != nil {
		t.Fatal(err)
	}
	deadline := got.Deadline
	if deadline.Before(before.Add(QuoteLifetime)) || deadline.After(time.Now().Add(QuoteLifetime)) {
		t.Errorf("deadline %v is not QuoteLifetime after the quote", deadline)
	}
	got.Deadline = time.Time{}
	data := hexutil.MustDecode(fmt.Sprintf("0x4630a0d8%064x%064x", amt("1000000000"), amt("1492500000")))
	want := &swaps.Route{
		Router: "lifi", ExternalID: "fake-quote-1", FromChainID: 1, ToChainID: 1, FromToken: usdc, ToToken: weth,
		FromAmount: amt("1000000000"), ToAmount: amt("1500000000"), ToAmountMin: amt("1492500000"),
		Steps: []swaps.Step{{Type: swaps.StepSwap, Tool: "fakedex", FromChainID: 1, ToChainID: 1, FromToken: usdc, ToToken: weth,
			FromAmount: amt("1000000000"), ToAmount: amt("1500000000")}},
		Approval: &swaps.Approval{Token: usdc, Spender: common.HexToAddress(lififake.Diamond), Amount: amt("1000000000")},
		Transaction: swaps.TxRequest{ChainID: 1, From: wallet, To: common.HexToAddress(lififake.Diamond), Data: data,
			Value: amt("0"), Gas: 500000},
		Fees: []swaps.Fee{{Name: "LIFI Fixed Fee", Token: usdc, Amount: amt("2500000")},
			{Name: "gas", Token: common.Address{}, Amount: amt("2100000000000000")}},
	}
	if g, w := asJSON(t, got), asJSON(t, want); g != w {
		t.Errorf("route\n got %s\nwant %s", g, w)
	}
	reqs := f.Requests()
	q := reqs[len(reqs)-1].Query
	for k, v := range map[string]string{"fromChain": "1", "toChain": "1", "fromToken": usdc.Hex(), "toToken": weth.Hex(),
		"fromAmount": "1000000000", "fromAddress": wallet.Hex(), "toAddress": wallet.Hex(), "slippage": "0.005",
		"integrator": "platformapi"} {
		if q.Get(k) != v {
			t.Errorf("query %s = %q, want %q", k, q.Get(k), v)
		}
	}
}

func TestCrossChainQuoteIsOneCrossStep(t *testing.T) {
	r, _ := newRouter(t)
	q := erc20Request()
	q.ToChainID, q.ToToken = 10, common.HexToAddress("0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85")
	got, err := r.Quote(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != 1 || got.Steps[0].Type != swaps.StepCross || got.Steps[0].ToChainID != 10 || got.ToChainID != 10 ||
		got.Transaction.ChainID != 1 {
		t.Errorf("cross-chain route %+v", got)
	}
}

func TestSlippageBpsBecomesAnExactFraction(t *testing.T) {
	for _, tc := range []struct {
		bps  uint32
		want string
	}{{0, "0"}, {1, "0.0001"}, {10, "0.001"}, {50, "0.005"}, {1234, "0.1234"}, {5000, "0.5"}, {9999, "0.9999"}, {10000, "1"}} {
		if got := Slippage(tc.bps); got != tc.want {
			t.Errorf("Slippage(%d) = %q, want %q", tc.bps, got, tc.want)
		}
	}
	// Through the wire: the fake reads the fraction exactly and its
	// toAmountMin is toAmount less exactly that many basis points.
	r, f := newRouter(t)
	for _, bps := range []uint32{1, 50, 10000} {
		q := erc20Request()
		q.SlippageBps = bps
		got, err := r.Quote(context.Background(), q)
		if err != nil {
			t.Fatalf("%d bps: %v", bps, err)
		}
		reqs := f.Requests()
		if s := reqs[len(reqs)-1].Query.Get("slippage"); s != Slippage(bps) {
			t.Errorf("%d bps sent as %q", bps, s)
		}
		want := new(big.Int).Mul(q.FromAmount, big.NewInt(int64(10000-bps)))
		want.Quo(want, big.NewInt(10000))
		if got.ToAmountMin.Cmp(want) != 0 {
			t.Errorf("%d bps: toAmountMin %s, want %s", bps, got.ToAmountMin, want)
		}
	}
}

func TestApprovalIsExactlyTheAmountAndNoneForNative(t *testing.T) {
	eee := "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE"
	for _, tc := range []struct {
		name         string
		from         common.Address
		respond      func(*lififake.Quote)
		wantApproval bool
		wantValue    string
	}{
		{"erc20 input approves the exact amount", usdc, nil, true, "0"},
		{"native input as the zero address needs no approval", common.Address{}, nil, false, "1000000000"},
		{"native input spelled 0xEeee by the router needs no approval", common.Address{}, func(q *lififake.Quote) {
			q.Action.FromToken.Address = eee
			q.IncludedSteps[0].Action.FromToken.Address = eee
		}, false, "1000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, f := newRouter(t)
			f.OnQuote(tc.respond)
			q := erc20Request()
			q.FromToken = tc.from
			got, err := r.Quote(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if (got.Approval != nil) != tc.wantApproval {
				t.Fatalf("approval %+v, want one: %v", got.Approval, tc.wantApproval)
			}
			if tc.wantApproval && (got.Approval.Amount.Cmp(q.FromAmount) != 0 || got.Approval.Token != q.FromToken ||
				got.Approval.Spender != common.HexToAddress(lififake.Diamond)) {
				t.Errorf("approval %+v is not exactly %s of %s for the diamond", got.Approval, q.FromAmount, q.FromToken)
			}
			if got.Transaction.Value.String() != tc.wantValue {
				t.Errorf("value %s, want %s", got.Transaction.Value, tc.wantValue)
			}
		})
	}
}

func TestRouteNotMatchingTheRequestIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(*lififake.Quote)
	}{
		{"transaction from another sender", func(q *lififake.Quote) { q.TransactionRequest.From = other.Hex() }},
		{"transaction on another chain", func(q *lififake.Quote) { q.TransactionRequest.ChainID = 10 }},
		{"transaction to no contract", func(q *lififake.Quote) { q.TransactionRequest.To = lififake.NativeToken }},
		{"transaction without call data", func(q *lififake.Quote) { q.TransactionRequest.Data = "0x" }},
		{"transaction value not a quantity", func(q *lififake.Quote) { q.TransactionRequest.Value = "1e18" }},
		{"no transaction", func(q *lififake.Quote) { q.TransactionRequest = nil }},
		{"another amount spent", func(q *lififake.Quote) { q.Estimate.FromAmount = "1000000001" }},
		{"another amount in the action", func(q *lififake.Quote) { q.Action.FromAmount = "2000000000" }},
		{"delivered to another address", func(q *lififake.Quote) { q.Action.ToAddress = other.Hex() }},
		{"sent from another address", func(q *lififake.Quote) { q.Action.FromAddress = other.Hex() }},
		{"another destination chain", func(q *lififake.Quote) { q.Action.ToChainID = 56 }},
		{"another destination token", func(q *lififake.Quote) { q.Action.ToToken.Address = other.Hex() }},
		{"another source token", func(q *lififake.Quote) { q.Action.FromToken.Address = other.Hex() }},
		{"no minimum", func(q *lififake.Quote) { q.Estimate.ToAmountMin = "0" }},
		{"minimum above the amount", func(q *lififake.Quote) { q.Estimate.ToAmountMin = "1000000001" }},
		{"minimum below the slippage", func(q *lififake.Quote) { q.Estimate.ToAmountMin = "900000000" }},
		{"amount in exponent form", func(q *lififake.Quote) { q.Estimate.ToAmount = "1e9" }},
		{"negative amount", func(q *lififake.Quote) { q.Estimate.ToAmount = "-1000000000" }},
		{"hex amount", func(q *lififake.Quote) { q.Estimate.FromAmount = "0x3b9aca00" }},
		{"fractional amount", func(q *lififake.Quote) { q.Estimate.ToAmount = "1000000000.5" }},
		{"no approval address for a token input", func(q *lififake.Quote) { q.Estimate.ApprovalAddress = "" }},
		{"unknown step type", func(q *lififake.Quote) { q.IncludedSteps[0].Type = "custom" }},
		{"malformed fee", func(q *lififake.Quote) { q.Estimate.FeeCosts[0].Amount = "lots" }},
		{"no quote id", func(q *lififake.Quote) { q.ID = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, f := newRouter(t)
			f.OnQuote(tc.tamper)
			got, err := r.Quote(context.Background(), erc20Request())
			if !errors.Is(err, swaps.ErrRouteMismatch) || !errors.Is(err, swaps.ErrUnavailable) {
				t.Fatalf("got %+v, %v; want ErrRouteMismatch", got, err)
			}
		})
	}
}

func TestMinimumAllowsSlippagePerStep(t *testing.T) {
	// Two hops at 50 bps each: 1000000000 × 0.995² = 990025000.
	r, f := newRouter(t)
	f.OnQuote(func(q *lififake.Quote) {
		q.IncludedSteps = append(q.IncludedSteps, q.IncludedSteps[0])
		q.Estimate.ToAmountMin = "990025000"
	})
	if _, err := r.Quote(context.Background(), erc20Request()); err != nil {
		t.Fatal(err)
	}
}

func TestNoRouteIsErrNoRoute(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*lififake.Fake)
	}{
		{"404 no available quotes", func(f *lififake.Fake) { f.FailNext(1, lififake.NoRoute) }},
		{"amount too small to deliver anything", func(f *lififake.Fake) { f.SetRate(1, 10_000_000_000) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, f := newRouter(t)
			tc.setup(f)
			if _, err := r.Quote(context.Background(), erc20Request()); !errors.Is(err, swaps.ErrNoRoute) {
				t.Fatalf("err %v, want ErrNoRoute", err)
			}
		})
	}
}

func TestRateLimitCarriesRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{{"7", 7 * time.Second}, {"", time.Second}, {"0", time.Second}, {"999999999999", maxRetryAfter}} {
		t.Run("Retry-After "+tc.header, func(t *testing.T) {
			r, f := newRouter(t)
			f.SetRetryAfter(tc.header)
			f.FailNext(3, lififake.RateLimited)
			_, err1 := r.Quote(context.Background(), erc20Request())
			_, err2 := r.Tokens(context.Background(), 1)
			_, err3 := r.Status(context.Background(), &swaps.Route{FromChainID: 1, ToChainID: 1}, common.Hash{1})
			for _, err := range []error{err1, err2, err3} {
				var rl *swaps.RateLimitedError
				if !errors.As(err, &rl) || !errors.Is(err, swaps.ErrRateLimited) || rl.RetryAfter != tc.want {
					t.Errorf("err %v, want RateLimitedError after %s", err, tc.want)
				}
			}
		})
	}
}

func TestRouterFailuresAreUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*lififake.Fake)
	}{
		{"server error", func(f *lififake.Fake) { f.FailNext(1, lififake.ServerError) }},
		{"timeout", func(f *lififake.Fake) { f.FailNext(1, lififake.Hang) }},
		{"wrong api key", func(f *lififake.Fake) { f.RequireAPIKey("another-key") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := lififake.New()
			t.Cleanup(f.Close)
			tc.setup(f)
			r := New(Config{BaseURL: f.URL(), APIKey: apiKey, HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
			_, err := r.Quote(context.Background(), erc20Request())
			if !errors.Is(err, swaps.ErrUnavailable) || errors.Is(err, swaps.ErrRouteMismatch) {
				t.Fatalf("err %v, want ErrUnavailable", err)
			}
		})
	}
	t.Run("router gone", func(t *testing.T) {
		f := lififake.New()
		f.Close()
		if _, err := New(Config{BaseURL: f.URL()}).Tokens(context.Background(), 1); !errors.Is(err, swaps.ErrUnavailable) {
			t.Fatalf("err %v, want ErrUnavailable", err)
		}
	})
}

func TestRedirectIsNotFollowedWithTheKey(t *testing.T) {
	target := lififake.New()
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL()+"/tokens?chains=1", http.StatusFound))
	t.Cleanup(redirect.Close)
	r := New(Config{BaseURL: redirect.URL, APIKey: apiKey})
	if _, err := r.Tokens(context.Background(), 1); !errors.Is(err, swaps.ErrUnavailable) {
		t.Fatalf("err %v, want ErrUnavailable", err)
	}
	if n := len(target.Requests()); n != 0 {
		t.Errorf("redirect followed: the target saw %d requests", n)
	}
}

func TestTokensAreMappedBoundedAndMalformedSkipped(t *testing.T) {
	r, f := newRouter(t)
	eee := "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE"
	f.SetTokens(1,
		lififake.Token{Address: usdc.Hex(), ChainID: 1, Symbol: "USDC", Name: "USD Coin", Decimals: 6, PriceUSD: "1.00"},
		lififake.Token{Address: eee, ChainID: 1, Symbol: "ETH", Name: "Ether", Decimals: 18},
		lififake.Token{Address: "0x1234", ChainID: 1, Symbol: "BAD", Name: "short address", Decimals: 18},
		lififake.Token{Address: "A0b86991c6218b36c1d19D4a2e9Eb0cE3606eB49", ChainID: 1, Symbol: "BAD", Name: "no 0x", Decimals: 18},
		lififake.Token{Address: other.Hex(), ChainID: 56, Symbol: "BAD", Name: "other chain", Decimals: 18},
		lififake.Token{Address: other.Hex(), ChainID: 1, Symbol: "BAD", Name: "decimals", Decimals: 300},
		lififake.Token{Address: other.Hex(), ChainID: 1, Symbol: "", Name: "no symbol", Decimals: 18},
		lififake.Token{Address: other.Hex(), ChainID: 1, Symbol: "BAD\nLINE", Name: "control", Decimals: 18},
		lififake.Token{Address: usdc.Hex(), ChainID: 1, Symbol: "USDC2", Name: "duplicate", Decimals: 6},
		lififake.Token{Address: weth.Hex(), ChainID: 1, Symbol: "WETH", Name: "Wrapped Ether", Decimals: 18},
	)
	f.SetTokens(56, lififake.Token{Address: other.Hex(), ChainID: 56, Symbol: "BNB", Name: "BNB", Decimals: 18})
	got, err := r.Tokens(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []swaps.Token{
		{ChainID: 1, Address: usdc, Symbol: "USDC", Name: "USD Coin", Decimals: 6},
		{ChainID: 1, Address: common.Address{}, Symbol: "ETH", Name: "Ether", Decimals: 18},
		{ChainID: 1, Address: weth, Symbol: "WETH", Name: "Wrapped Ether", Decimals: 18},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens\n got %+v\nwant %+v", got, want)
	}
	if q := f.Requests()[0].Query.Get("chains"); q != "1" {
		t.Errorf("chains=%q", q)
	}

	many := make([]lififake.Token, swaps.MaxTokens+500)
	for i := range many {
		many[i] = lififake.Token{Address: common.BigToAddress(big.NewInt(int64(i + 1))).Hex(), ChainID: 8453, Symbol: fmt.Sprint("T", i), Decimals: 18}
	}
	f.SetTokens(8453, many...)
	got, err = r.Tokens(context.Background(), 8453)
	if err != nil || len(got) != swaps.MaxTokens || got[swaps.MaxTokens-1].Symbol != fmt.Sprint("T", swaps.MaxTokens-1) {
		t.Fatalf("%d tokens, %v; want the first %d", len(got), err, swaps.MaxTokens)
	}

	if got, err := r.Tokens(context.Background(), 137); err != nil || len(got) != 0 {
		t.Errorf("unlisted chain: %v, %v; want none", got, err)
	}
}

func TestStatusMapping(t *testing.T) {
	sent := common.HexToHash("0x5862726dbc6643c6a34b3496bb15e91f11771f6756ccf83826304846bbc93c0a")
	recv := common.HexToHash("0x2862726dbc6643c6a34b3496bb15e91f11771f6756ccf83826604846bbc93c0b")
	route := &swaps.Route{FromChainID: 1, ToChainID: 10, FromToken: usdc, Steps: []swaps.Step{
		{Type: swaps.StepSwap, Tool: "fakedex"}, {Type: swaps.StepCross, Tool: "stargateV2"}}}
	sending := &lififake.Leg{TxHash: sent.Hex(), Amount: "1000000000", Token: &lififake.Token{Address: usdc.Hex()}, ChainID: 1}
	receiving := &lififake.Leg{TxHash: recv.Hex(), Amount: "999000000", Token: &lififake.Token{Address: other.Hex()}, ChainID: 10}
	refund := &lififake.Leg{TxHash: recv.Hex(), Amount: "1000000000", Token: &lififake.Token{Address: usdc.Hex()}, ChainID: 1}
	sendLeg := &swaps.Leg{ChainID: 1, TxHash: sent, Token: usdc, Amount: amt("1000000000")}
	for _, tc := range []struct {
		name string
		lifi lififake.Status
		want swaps.Status
	}{
		{"NOT_FOUND", lififake.Status{Status: "NOT_FOUND"}, swaps.Status{Status: "not_found"}},
		{"PENDING", lififake.Status{Status: "PENDING", Substatus: "WAIT_SOURCE_CONFIRMATIONS", Sending: &lififake.Leg{TxHash: sent.Hex(), ChainID: 1}},
			swaps.Status{Status: "pending", Substatus: "wait_source_confirmations", Sending: &swaps.Leg{ChainID: 1, TxHash: sent}}},
		{"DONE/COMPLETED", lififake.Status{Status: "DONE", Substatus: "COMPLETED", Sending: sending, Receiving: receiving},
			swaps.Status{Status: "done", Substatus: "completed", Sending: sendLeg,
				Receiving: &swaps.Leg{ChainID: 10, TxHash: recv, Token: other, Amount: amt("999000000")}}},
		{"DONE/PARTIAL", lififake.Status{Status: "DONE", Substatus: "PARTIAL", Sending: sending, Receiving: receiving},
			swaps.Status{Status: "done", Substatus: "partial", Sending: sendLeg,
				Receiving: &swaps.Leg{ChainID: 10, TxHash: recv, Token: other, Amount: amt("999000000")}}},
		{"DONE/REFUNDED", lififake.Status{Status: "DONE", Substatus: "REFUNDED", Sending: sending, Receiving: refund},
			swaps.Status{Status: "done", Substatus: "refunded", Sending: sendLeg,
				Receiving: &swaps.Leg{ChainID: 1, TxHash: recv, Token: usdc, Amount: amt("1000000000")}}},
		{"FAILED", lififake.Status{Status: "FAILED", Substatus: "SLIPPAGE_EXCEEDED", Sending: sending},
			swaps.Status{Status: "failed", Substatus: "slippage_exceeded", Sending: sendLeg}},
		{"INVALID", lififake.Status{Status: "INVALID"}, swaps.Status{Status: "failed", Substatus: "invalid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, f := newRouter(t)
			f.SetStatus(sent, tc.lifi)
			got, err := r.Status(context.Background(), route, sent)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := asJSON(t, got), asJSON(t, tc.want); g != w {
				t.Errorf("status\n got %s\nwant %s", g, w)
			}
			q := f.Requests()[0].Query
			if q.Get("txHash") != sent.Hex() || q.Get("fromChain") != "1" || q.Get("toChain") != "10" || q.Get("bridge") != "stargateV2" {
				t.Errorf("status query %v", q)
			}
		})
	}
}

func TestStatusNotMatchingTheRouteIsRefused(t *testing.T) {
	sent := common.Hash{0xaa}
	route := &swaps.Route{FromChainID: 1, ToChainID: 10}
	for _, tc := range []struct {
		name string
		lifi lififake.Status
	}{
		{"another sending transaction", lififake.Status{Status: "PENDING", Sending: &lififake.Leg{TxHash: common.Hash{0xbb}.Hex(), ChainID: 1}}},
		{"sending on another chain", lififake.Status{Status: "PENDING", Sending: &lififake.Leg{TxHash: sent.Hex(), ChainID: 56}}},
		{"receiving on a third chain", lififake.Status{Status: "DONE", Receiving: &lififake.Leg{TxHash: sent.Hex(), ChainID: 56}}},
		{"unknown status", lififake.Status{Status: "MAYBE"}},
		{"substatus not a word", lififake.Status{Status: "DONE", Substatus: "COMPLETED; drop"}},
		{"amount not decimal", lififake.Status{Status: "DONE", Sending: &lififake.Leg{TxHash: sent.Hex(), Amount: "1.5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, f := newRouter(t)
			f.SetStatus(sent, tc.lifi)
			if got, err := r.Status(context.Background(), route, sent); !errors.Is(err, swaps.ErrRouteMismatch) {
				t.Fatalf("got %+v, %v; want ErrRouteMismatch", got, err)
			}
		})
	}
}

func TestAPIKeyIsSentInTheHeaderAndInNoError(t *testing.T) {
	r, f := newRouter(t)
	ctx := context.Background()
	if _, err := r.Quote(ctx, erc20Request()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Tokens(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Status(ctx, &swaps.Route{FromChainID: 1, ToChainID: 1}, common.Hash{1}); err != nil {
		t.Fatal(err)
	}
	for _, req := range f.Requests() {
		if req.Header.Get("x-lifi-api-key") != apiKey {
			t.Errorf("%s without the key header", req.Path)
		}
		if strings.Contains(req.Query.Encode(), apiKey) {
			t.Errorf("%s carries the key in its query", req.Path)
		}
	}

	var errs []error
	for _, fail := range []lififake.Failure{lififake.RateLimited, lififake.ServerError, lififake.NoRoute} {
		f.FailNext(1, fail)
		_, err := r.Quote(ctx, erc20Request())
		errs = append(errs, err)
	}
	f.OnQuote(func(q *lififake.Quote) { q.TransactionRequest.From = other.Hex() })
	_, err := r.Quote(ctx, erc20Request())
	errs = append(errs, err)
	f.RequireAPIKey("another")
	_, err = r.Tokens(ctx, 1)
	errs = append(errs, err)
	gone := New(Config{BaseURL: "http://127.0.0.1:1", APIKey: apiKey})
	_, err = gone.Tokens(ctx, 1)
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("case %d: no error", i)
		}
		if strings.Contains(err.Error(), apiKey) {
			t.Errorf("case %d: error %q holds the key", i, err)
		}
	}
}

func TestQuoteRequestIsValidatedBeforeAsking(t *testing.T) {
	r, f := newRouter(t)
	for _, q := range []swaps.QuoteRequest{
		{FromChainID: 1, ToChainID: 1, FromToken: usdc, ToToken: weth, FromAmount: big.NewInt(0), FromAddress: wallet},
		{FromChainID: 1, ToChainID: 1, FromToken: usdc, ToToken: weth, FromAmount: nil, FromAddress: wallet},
		{FromChainID: 1, ToChainID: 1, FromToken: usdc, ToToken: weth, FromAmount: big.NewInt(1), FromAddress: wallet, SlippageBps: 10001},
		{FromChainID: 1, ToChainID: 1, FromToken: usdc, ToToken: weth, FromAmount: big.NewInt(1)},
	} {
		if _, err := r.Quote(context.Background(), q); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests sent for invalid quotes", n)
	}
}
