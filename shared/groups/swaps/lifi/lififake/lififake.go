// Package lififake is a local fake of LI.FI's documented REST API — GET
// /tokens, /quote and /status — for tests of package lifi and of anything
// built on it. It listens on loopback only, quotes deterministically
// (toAmount = fromAmount × rate, toAmountMin = toAmount less the slippage
// asked), records every request, and fails on demand. It never signs,
// sends or holds anything: it is a test double, not a router.
package lififake

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
)

// Diamond is the contract the fake's routes call and are approved for
// (LI.FI's diamond address on most EVM chains).
const Diamond = "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE"

// NativeToken is how the fake spells a native coin in its answers.
const NativeToken = "0x0000000000000000000000000000000000000000"

// Token is LI.FI's token object. Fields are loose (string address, int
// decimals) so that tests can serve malformed entries.
type Token struct {
	Address  string `json:"address"`
	ChainID  uint64 `json:"chainId"`
	Symbol   string `json:"symbol"`
	Name     string `json:"name"`
	Decimals int    `json:"decimals"`
	PriceUSD string `json:"priceUSD,omitempty"`
}

// Action is what a step moves.
type Action struct {
	FromChainID uint64      `json:"fromChainId"`
	ToChainID   uint64      `json:"toChainId"`
	FromToken   Token       `json:"fromToken"`
	ToToken     Token       `json:"toToken"`
	FromAmount  string      `json:"fromAmount"`
	FromAddress string      `json:"fromAddress,omitempty"`
	ToAddress   string      `json:"toAddress,omitempty"`
	Slippage    json.Number `json:"slippage,omitempty"`
}

// Cost is an entry of feeCosts or gasCosts.
type Cost struct {
	Name     string `json:"name,omitempty"`
	Type     string `json:"type,omitempty"`
	Amount   string `json:"amount"`
	Token    Token  `json:"token"`
	Included bool   `json:"included,omitempty"`
}

// Estimate is a step's expected outcome.
type Estimate struct {
	Tool            string `json:"tool,omitempty"`
	ApprovalAddress string `json:"approvalAddress,omitempty"`
	FromAmount      string `json:"fromAmount"`
	ToAmount        string `json:"toAmount"`
	ToAmountMin     string `json:"toAmountMin"`
	FeeCosts        []Cost `json:"feeCosts,omitempty"`
	GasCosts        []Cost `json:"gasCosts,omitempty"`
}

// Step is one step of a quote, or the quote itself.
type Step struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Tool     string   `json:"tool"`
	Action   Action   `json:"action"`
	Estimate Estimate `json:"estimate"`
}

// TransactionRequest is the unsigned transaction of a quote; quantities
// are hex as LI.FI sends them.
type TransactionRequest struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Data     string `json:"data"`
	Value    string `json:"value"`
	GasLimit string `json:"gasLimit,omitempty"`
	GasPrice string `json:"gasPrice,omitempty"`
	ChainID  uint64 `json:"chainId"`
}

// Quote is the body of GET /quote.
type Quote struct {
	Step
	IncludedSteps      []Step              `json:"includedSteps"`
	TransactionRequest *TransactionRequest `json:"transactionRequest"`
}

// Leg is one side of a status.
type Leg struct {
	TxHash  string `json:"txHash,omitempty"`
	Amount  string `json:"amount,omitempty"`
	Token   *Token `json:"token,omitempty"`
	ChainID uint64 `json:"chainId,omitempty"`
}

// Status is the body of GET /status.
type Status struct {
	TransactionID string `json:"transactionId,omitempty"`
	Status        string `json:"status"`
	Substatus     string `json:"substatus,omitempty"`
	Sending       *Leg   `json:"sending,omitempty"`
	Receiving     *Leg   `json:"receiving,omitempty"`
}

// Failure is a programmed failure of the next requests.
type Failure int

const (
	RateLimited Failure = iota + 1 // 429 with Retry-After (SetRetryAfter)
	ServerError                    // 500 {"code":1006}
	NoRoute                        // 404 {"code":1002}
	Hang                           // no answer until the client gives up or the fake closes
)

// Request is one request the fake received.
type Request struct {
	Path   string
	Query  url.Values
	Header http.Header
}

// Fake is a running fake LI.FI.
type Fake struct {
	srv  *httptest.Server
	done chan struct{}

	mu         sync.Mutex
	tokens     map[uint64][]Token
	rateNum    *big.Int
	rateDen    *big.Int
	onQuote    func(*Quote)
	statuses   map[common.Hash]Status
	failures   []Failure
	retryAfter string
	apiKey     string
	requests   []Request
	quotes     int
}

// New starts a fake on a loopback port; Close stops it.
func New() *Fake {
	f := &Fake{
		done: make(chan struct{}), tokens: map[uint64][]Token{}, statuses: map[common.Hash]Status{},
		rateNum: big.NewInt(1), rateDen: big.NewInt(1), retryAfter: "7",
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tokens", f.serveTokens)
	mux.HandleFunc("GET /quote", f.serveQuote)
	mux.HandleFunc("GET /status", f.serveStatus)
	f.srv = httptest.NewServer(f.intercept(mux))
	return f
}

// URL is the fake's base URL, to use as lifi.Config.BaseURL.
func (f *Fake) URL() string { return f.srv.URL }

// Close releases hanging requests and stops the server.
func (f *Fake) Close() {
	close(f.done)
	f.srv.Close()
}

// SetTokens replaces chainID's token list.
func (f *Fake) SetTokens(chainID uint64, tokens ...Token) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[chainID] = append([]Token(nil), tokens...)
}

// SetRate makes a quote deliver fromAmount × num / den (default 1/1).
func (f *Fake) SetRate(num, den int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rateNum, f.rateDen = big.NewInt(num), big.NewInt(den)
}

// OnQuote lets a test rewrite every quote before it is sent (nil: none).
func (f *Fake) OnQuote(hook func(*Quote)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onQuote = hook
}

// SetStatus is what GET /status answers for txHash; unknown hashes answer
// {"status":"NOT_FOUND"}.
func (f *Fake) SetStatus(txHash common.Hash, s Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses[txHash] = s
}

// FailNext makes the next n requests, of any endpoint, fail as kind.
func (f *Fake) FailNext(n int, kind Failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.failures = append(f.failures, kind)
	}
}

// SetRetryAfter is the Retry-After header of a RateLimited failure
// (default "7"; "" sends none).
func (f *Fake) SetRetryAfter(v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retryAfter = v
}

// RequireAPIKey makes every request without this x-lifi-api-key a 401.
func (f *Fake) RequireAPIKey(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apiKey = key
}

// Requests is every request received so far, oldest first.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// intercept records the request, then applies a programmed failure or the
// API key requirement before the endpoint runs.
func (f *Fake) intercept(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, Request{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()})
		var fail Failure
		if len(f.failures) > 0 {
			fail, f.failures = f.failures[0], f.failures[1:]
		}
		key, retryAfter := f.apiKey, f.retryAfter
		f.mu.Unlock()
		switch fail {
		case RateLimited:
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			writeError(w, http.StatusTooManyRequests, 1005, "Rate limit exceeded")
			return
		case ServerError:
			writeError(w, http.StatusInternalServerError, 1006, "Internal server error")
			return
		case NoRoute:
			writeError(w, http.StatusNotFound, 1002, "No available quotes for the requested transfer")
			return
		case Hang:
			select {
			case <-r.Context().Done():
			case <-f.done:
			}
			return
		}
		if key != "" && r.Header.Get("x-lifi-api-key") != key {
			writeError(w, http.StatusUnauthorized, 1010, "Unauthorized")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

func (f *Fake) serveTokens(w http.ResponseWriter, r *http.Request) {
	out := map[string][]Token{}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range strings.Split(r.URL.Query().Get("chains"), ",") {
		id, err := strconv.ParseUint(c, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, 1011, "invalid chains")
			return
		}
		out[c] = append([]Token{}, f.tokens[id]...)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

func (f *Fake) serveQuote(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fromChain, err1 := strconv.ParseUint(q.Get("fromChain"), 10, 64)
	toChain, err2 := strconv.ParseUint(q.Get("toChain"), 10, 64)
	fromAmount, ok := new(big.Int).SetString(q.Get("fromAmount"), 10)
	bps, err3 := slippageBps(q.Get("slippage"))
	fromAddress, toAddress := q.Get("fromAddress"), q.Get("toAddress")
	if toAddress == "" {
		toAddress = fromAddress
	}
	if err1 != nil || err2 != nil || err3 != nil || !ok || fromAmount.Sign() <= 0 ||
		!common.IsHexAddress(q.Get("fromToken")) || !common.IsHexAddress(q.Get("toToken")) ||
		!common.IsHexAddress(fromAddress) || !common.IsHexAddress(toAddress) {
		writeError(w, http.StatusBadRequest, 1011, "Invalid quote request")
		return
	}

	f.mu.Lock()
	toAmount := new(big.Int).Mul(fromAmount, f.rateNum)
	toAmount.Quo(toAmount, f.rateDen)
	fromToken := f.token(fromChain, q.Get("fromToken"))
	toToken := f.token(toChain, q.Get("toToken"))
	gasToken := f.token(fromChain, NativeToken)
	f.quotes++
	id := fmt.Sprintf("fake-quote-%d", f.quotes)
	hook := f.onQuote
	f.mu.Unlock()
	if toAmount.Sign() == 0 {
		writeError(w, http.StatusNotFound, 1002, "No available quotes for the requested transfer")
		return
	}
	toMin := new(big.Int).Mul(toAmount, big.NewInt(int64(10000-bps)))
	toMin.Quo(toMin, big.NewInt(10000))
	fee := new(big.Int).Mul(fromAmount, big.NewInt(25))
	fee.Quo(fee, big.NewInt(10000))

	action := Action{FromChainID: fromChain, ToChainID: toChain, FromToken: fromToken, ToToken: toToken,
		FromAmount: fromAmount.String(), FromAddress: fromAddress, ToAddress: toAddress, Slippage: json.Number(q.Get("slippage"))}
	est := Estimate{ApprovalAddress: Diamond, FromAmount: fromAmount.String(), ToAmount: toAmount.String(), ToAmountMin: toMin.String()}
	typ, tool := "swap", "fakedex"
	if fromChain != toChain {
		typ, tool = "cross", "fakebridge"
	}
	inner := Step{ID: id + "-1", Type: typ, Tool: tool, Action: action, Estimate: est}
	inner.Estimate.Tool = tool
	est.FeeCosts = []Cost{{Name: "LIFI Fixed Fee", Amount: fee.String(), Token: fromToken, Included: true}}
	est.GasCosts = []Cost{{Type: "SEND", Amount: "2100000000000000", Token: gasToken}}
	value := "0x00"
	if native(fromToken.Address) {
		value = "0x" + fromAmount.Text(16)
	}
	data := fmt.Sprintf("0x4630a0d8%064x%064x", fromAmount, toMin)
	quote := Quote{
		Step:          Step{ID: id, Type: "lifi", Tool: tool, Action: action, Estimate: est},
		IncludedSteps: []Step{inner},
		TransactionRequest: &TransactionRequest{From: fromAddress, To: Diamond, Data: data, Value: value,
			GasLimit: "0x7a120", GasPrice: "0x3b9aca00", ChainID: fromChain},
	}
	if hook != nil {
		hook(&quote)
	}
	writeJSON(w, http.StatusOK, quote)
}

// token is the listed token at addr on chain, or a stand-in for it.
// Callers hold f.mu.
func (f *Fake) token(chain uint64, addr string) Token {
	for _, t := range f.tokens[chain] {
		if strings.EqualFold(t.Address, addr) {
			return t
		}
	}
	if native(addr) {
		return Token{Address: NativeToken, ChainID: chain, Symbol: "ETH", Name: "Ether", Decimals: 18}
	}
	return Token{Address: addr, ChainID: chain, Symbol: "TKN", Name: "Token", Decimals: 18}
}

func native(addr string) bool {
	a := common.HexToAddress(addr)
	return a == common.Address{} || a == common.HexToAddress("0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE")
}

// slippageBps reads a decimal fraction in [0, 1] with at most four
// decimals, exactly: the fake refuses what it could only round.
func slippageBps(s string) (uint32, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole != "0" && whole != "1" || len(frac) > 4 || strings.Trim(frac, "0123456789") != "" {
		return 0, fmt.Errorf("slippage %q", s)
	}
	n, _ := strconv.ParseUint(whole+frac+strings.Repeat("0", 4-len(frac)), 10, 32)
	if n > 10000 {
		return 0, fmt.Errorf("slippage %q", s)
	}
	return uint32(n), nil
}

func (f *Fake) serveStatus(w http.ResponseWriter, r *http.Request) {
	h := r.URL.Query().Get("txHash")
	if len(h) != 66 || !strings.HasPrefix(h, "0x") {
		writeError(w, http.StatusBadRequest, 1011, "invalid txHash")
		return
	}
	f.mu.Lock()
	s, ok := f.statuses[common.HexToHash(h)]
	f.mu.Unlock()
	if !ok {
		s = Status{Status: "NOT_FOUND"}
	}
	writeJSON(w, http.StatusOK, s)
}
