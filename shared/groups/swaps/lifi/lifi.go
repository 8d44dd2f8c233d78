// Package lifi is the swaps.Router port over LI.FI's REST API (and any
// service compatible with it): GET /tokens, GET /quote and GET /status.
//
// The API key travels only in the x-lifi-api-key header: it is never put in
// a URL, an error or a log, and redirects are not followed, so it cannot be
// forwarded to another host. Amounts are decimal integer strings read with
// big.Int, never floats; responses are read through a size bound. Every
// quote is checked against the request before it becomes a swaps.Route:
// sender, recipient, chains, tokens and amount must be the ones asked for,
// and the allowance is exactly the amount spent.
package lifi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"platformapi/shared/groups/swaps"
)

// DefaultBaseURL is LI.FI's production API.
const DefaultBaseURL = "https://li.quest/v1"

// Bounds.
const (
	MaxResponseBytes = 2 << 20 // per response
	MaxSteps         = 16      // per route
	MaxFees          = 32      // per route
	// QuoteLifetime is how long a quote is offered: LI.FI's prices are not
	// firm, and the platform promises at most 30 s.
	QuoteLifetime = 30 * time.Second
)

// Retry-After bounds: a missing or unreadable header means one second, a
// longer wait is capped so a misbehaving router cannot park clients for
// hours.
const (
	minRetryAfter = time.Second
	maxRetryAfter = 10 * time.Minute
)

// Config is where LI.FI is and who we are there.
type Config struct {
	BaseURL    string // default DefaultBaseURL
	APIKey     string // sent as x-lifi-api-key; optional (lower rate limits without)
	HTTPClient *http.Client
	Integrator string // sent as the integrator parameter of a quote when set
}

// Router is a LI.FI-compatible router.
type Router struct {
	cfg    Config
	client *http.Client
}

var _ swaps.Router = (*Router)(nil)

// New builds the router. A caller's client is copied, not changed, so that
// redirects can be refused without touching it.
func New(cfg Config) *Router {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	client := &http.Client{Timeout: 15 * time.Second}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Router{cfg: cfg, client: client}
}

func (r *Router) Name() string { return "lifi" }

// token is LI.FI's token object, the fields we use.
type token struct {
	Address  string      `json:"address"`
	ChainID  json.Number `json:"chainId"`
	Symbol   string      `json:"symbol"`
	Name     string      `json:"name"`
	Decimals json.Number `json:"decimals"`
}

// Tokens reads the chain's list as a stream and stops at swaps.MaxTokens,
// so a long list costs neither memory nor the whole download. A malformed
// entry is skipped, not fatal: one bad token must not hide the others.
func (r *Router) Tokens(ctx context.Context, chainID uint64) ([]swaps.Token, error) {
	chain := strconv.FormatUint(chainID, 10)
	resp, err := r.get(ctx, "/tokens", url.Values{"chains": {chain}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	d := json.NewDecoder(io.LimitReader(resp.Body, MaxResponseBytes))
	d.UseNumber()
	bad := func(err error) error { return fmt.Errorf("%w: lifi: GET /tokens: %v", swaps.ErrUnavailable, err) }
	if err := enterObject(d, "tokens"); err != nil {
		return nil, bad(err)
	}
	out := []swaps.Token{}
	seen := map[common.Address]bool{}
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return nil, bad(err)
		}
		if key != chain {
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return nil, bad(err)
			}
			continue
		}
		if err := expectDelim(d, '['); err != nil {
			return nil, bad(err)
		}
		for d.More() && len(out) < swaps.MaxTokens {
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				return nil, bad(err)
			}
			t, ok := parseToken(raw, chainID)
			if ok && !seen[t.Address] {
				seen[t.Address] = true
				out = append(out, t)
			}
		}
		return out, nil
	}
	return out, nil
}

// enterObject positions d inside the object held by the top-level field.
func enterObject(d *json.Decoder, field string) error {
	if err := expectDelim(d, '{'); err != nil {
		return err
	}
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return err
		}
		if key == field {
			return expectDelim(d, '{')
		}
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return err
		}
	}
	return fmt.Errorf("no %q field", field)
}

func expectDelim(d *json.Decoder, want json.Delim) error {
	t, err := d.Token()
	if err != nil {
		return err
	}
	if t != want {
		return fmt.Errorf("want %q, got %v", want, t)
	}
	return nil
}

func parseToken(raw json.RawMessage, chainID uint64) (swaps.Token, bool) {
	var t token
	if json.Unmarshal(raw, &t) != nil {
		return swaps.Token{}, false
	}
	addr, err := address(t.Address)
	c, err2 := strconv.ParseUint(t.ChainID.String(), 10, 64)
	dec, err3 := strconv.ParseUint(t.Decimals.String(), 10, 8)
	if err != nil || err2 != nil || err3 != nil || c != chainID ||
		!printable(t.Symbol, 32) || t.Symbol == "" || !printable(t.Name, 128) {
		return swaps.Token{}, false
	}
	return swaps.Token{ChainID: chainID, Address: addr, Symbol: t.Symbol, Name: t.Name, Decimals: uint8(dec)}, true
}

// printable is a bounded string without control characters.
func printable(s string, max int) bool {
	if len(s) > max {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || c == '\uFFFD' {
			return false
		}
	}
	return true
}

// nativeEEE is how LI.FI (and most EVM aggregators) also spell the native
// coin; we spell it with the zero address only.
var nativeEEE = common.HexToAddress("0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE")

// address reads a 0x-prefixed 20-byte address, the native coin's aliases
// folded into the zero address.
func address(s string) (common.Address, error) {
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") || !common.IsHexAddress(s) {
		return common.Address{}, fmt.Errorf("address %q", s)
	}
	a := common.HexToAddress(s)
	if a == nativeEEE {
		return common.Address{}, nil
	}
	return a, nil
}

// amount reads a decimal integer string: digits only, no sign, no
// exponent, no fraction, at most 78 digits (2^256).
func amount(s string) (*big.Int, error) {
	if s == "" || len(s) > 78 || strings.TrimLeft(s, "0123456789") != "" {
		return nil, fmt.Errorf("amount %q: want a decimal integer", s)
	}
	v, _ := new(big.Int).SetString(s, 10)
	return v, nil
}

// quantity reads a transaction quantity as LI.FI sends it: 0x-prefixed hex
// (leading zeros allowed, "0x00") or, tolerated, decimal digits.
func quantity(s string) (*big.Int, error) {
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		if h == "" || len(h) > 64 || strings.Trim(h, "0123456789abcdefABCDEF") != "" {
			return nil, fmt.Errorf("quantity %q", s)
		}
		v, _ := new(big.Int).SetString(h, 16)
		return v, nil
	}
	return amount(s)
}

// Slippage writes basis points as the exact decimal fraction LI.FI takes:
// 1 → "0.0001", 50 → "0.005", 10000 → "1".
func Slippage(bps uint32) string {
	s := strconv.FormatUint(uint64(bps/10000), 10)
	if frac := bps % 10000; frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%04d", frac), "0")
	}
	return s
}

// Wire shapes of /quote, the fields we use.
type (
	tokenRef struct {
		Address string `json:"address"`
	}
	action struct {
		FromChainID json.Number `json:"fromChainId"`
		ToChainID   json.Number `json:"toChainId"`
		FromToken   tokenRef    `json:"fromToken"`
		ToToken     tokenRef    `json:"toToken"`
		FromAmount  string      `json:"fromAmount"`
		FromAddress string      `json:"fromAddress"`
		ToAddress   string      `json:"toAddress"`
	}
	cost struct {
		Name   string   `json:"name"`
		Type   string   `json:"type"`
		Amount string   `json:"amount"`
		Token  tokenRef `json:"token"`
	}
	estimate struct {
		ApprovalAddress string `json:"approvalAddress"`
		FromAmount      string `json:"fromAmount"`
		ToAmount        string `json:"toAmount"`
		ToAmountMin     string `json:"toAmountMin"`
		FeeCosts        []cost `json:"feeCosts"`
		GasCosts        []cost `json:"gasCosts"`
	}
	step struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Tool     string   `json:"tool"`
		Action   action   `json:"action"`
		Estimate estimate `json:"estimate"`
	}
	quote struct {
		step
		IncludedSteps      []step `json:"includedSteps"`
		TransactionRequest *struct {
			From     string      `json:"from"`
			To       string      `json:"to"`
			Data     string      `json:"data"`
			Value    string      `json:"value"`
			GasLimit string      `json:"gasLimit"`
			ChainID  json.Number `json:"chainId"`
		} `json:"transactionRequest"`
	}
)

// Quote asks LI.FI for one route and checks it against q.
func (r *Router) Quote(ctx context.Context, q swaps.QuoteRequest) (*swaps.Route, error) {
	if q.FromAmount == nil || q.FromAmount.Sign() <= 0 || q.SlippageBps > 10000 || q.FromChainID == 0 || q.ToChainID == 0 || q.FromAddress == (common.Address{}) {
		return nil, errors.New("lifi: a quote needs chains, a sender, a positive amount and at most 10000 bps of slippage")
	}
	params := url.Values{
		"fromChain":   {strconv.FormatUint(q.FromChainID, 10)},
		"toChain":     {strconv.FormatUint(q.ToChainID, 10)},
		"fromToken":   {q.FromToken.Hex()},
		"toToken":     {q.ToToken.Hex()},
		"fromAmount":  {q.FromAmount.String()},
		"fromAddress": {q.FromAddress.Hex()},
		"toAddress":   {q.FromAddress.Hex()},
		"slippage":    {Slippage(q.SlippageBps)},
	}
	if r.cfg.Integrator != "" {
		params.Set("integrator", r.cfg.Integrator)
	}
	var got quote
	if err := r.getJSON(ctx, "/quote", params, &got); err != nil {
		return nil, err
	}
	route, err := r.route(q, &got)
	if err != nil {
		return nil, fmt.Errorf("%w: lifi: quote %q: %v", swaps.ErrRouteMismatch, truncate(got.ID), err)
	}
	return route, nil
}

// route turns LI.FI's answer into a Route, refusing anything that is not
// what q asked for. Errors here are mismatches.
func (r *Router) route(q swaps.QuoteRequest, got *quote) (*swaps.Route, error) {
	tx := got.TransactionRequest
	if tx == nil {
		return nil, errors.New("no transactionRequest")
	}
	var errs []error
	check := func(what string, ok bool) {
		if !ok {
			errs = append(errs, errors.New(what))
		}
	}
	check("id is not a short printable string", got.ID != "" && printable(got.ID, 128))
	from, err := address(tx.From)
	check("transactionRequest.from is not the sender", err == nil && from == q.FromAddress)
	txChain, err := strconv.ParseUint(tx.ChainID.String(), 10, 64)
	check("transactionRequest.chainId is not the source chain", err == nil && txChain == q.FromChainID)
	to, err := address(tx.To)
	check("transactionRequest.to is not a contract address", err == nil && to != (common.Address{}))
	data, err := hexutil.Decode(tx.Data)
	check("transactionRequest.data is not call data", err == nil && len(data) >= 4)
	value, err := quantity(tx.Value)
	check("transactionRequest.value is not a quantity", err == nil)
	var gas uint64
	if tx.GasLimit != "" {
		g, err := quantity(tx.GasLimit)
		check("transactionRequest.gasLimit is not a 64-bit quantity", err == nil && g.IsUint64())
		if err == nil && g.IsUint64() {
			gas = g.Uint64()
		}
	}

	a := got.Action
	fromChain, err1 := strconv.ParseUint(a.FromChainID.String(), 10, 64)
	toChain, err2 := strconv.ParseUint(a.ToChainID.String(), 10, 64)
	check("action chains are not the ones asked", err1 == nil && err2 == nil && fromChain == q.FromChainID && toChain == q.ToChainID)
	fromToken, err1 := address(a.FromToken.Address)
	toToken, err2 := address(a.ToToken.Address)
	check("action tokens are not the ones asked", err1 == nil && err2 == nil && fromToken == q.FromToken && toToken == q.ToToken)
	if a.FromAddress != "" {
		f, err := address(a.FromAddress)
		check("action.fromAddress is not the sender", err == nil && f == q.FromAddress)
	}
	if a.ToAddress != "" {
		t, err := address(a.ToAddress)
		check("action.toAddress is not the sender", err == nil && t == q.FromAddress)
	}
	if a.FromAmount != "" {
		v, err := amount(a.FromAmount)
		check("action.fromAmount is not the amount asked", err == nil && v.Cmp(q.FromAmount) == 0)
	}

	e := got.Estimate
	fromAmount, err := amount(e.FromAmount)
	check("estimate.fromAmount is not the amount asked", err == nil && fromAmount.Cmp(q.FromAmount) == 0)
	toAmount, err1 := amount(e.ToAmount)
	toMin, err2 := amount(e.ToAmountMin)
	// Only a caller accepting 100% slippage may be offered no minimum.
	check("estimate.toAmount/toAmountMin are not amounts with 0 < min ≤ amount",
		err1 == nil && err2 == nil && toAmount.Sign() > 0 && (toMin.Sign() > 0 || q.SlippageBps == 10000) && toMin.Cmp(toAmount) <= 0)

	included := got.IncludedSteps
	if len(included) == 0 {
		included = []step{got.step}
	}
	check("too many steps", len(included) <= MaxSteps)
	steps := make([]swaps.Step, 0, len(included))
	hops := 0
	for i := range included {
		if i >= MaxSteps {
			break
		}
		s, err := mapStep(&included[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("step %d: %v", i, err))
			continue
		}
		if s.Type != swaps.StepProtocol {
			hops++
		}
		steps = append(steps, s)
	}
	if err1 == nil && err2 == nil {
		check("estimate.toAmountMin is below what the slippage allows", toMin.Cmp(minimum(toAmount, q.SlippageBps, max(hops, 1))) >= 0)
	}

	var approval *swaps.Approval
	if q.FromToken != (common.Address{}) {
		spender, err := address(e.ApprovalAddress)
		check("estimate.approvalAddress is not an address", err == nil && spender != (common.Address{}))
		approval = &swaps.Approval{Token: q.FromToken, Spender: spender, Amount: new(big.Int).Set(q.FromAmount)}
	}

	fees, err := mapFees(e)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &swaps.Route{
		Router: r.Name(), ExternalID: got.ID,
		FromChainID: q.FromChainID, ToChainID: q.ToChainID, FromToken: q.FromToken, ToToken: q.ToToken,
		FromAmount: new(big.Int).Set(q.FromAmount), ToAmount: toAmount, ToAmountMin: toMin,
		Steps: steps, Approval: approval,
		Transaction: swaps.TxRequest{ChainID: q.FromChainID, From: q.FromAddress, To: to, Data: data, Value: value, Gas: gas},
		Fees:        fees,
		Deadline:    time.Now().Add(QuoteLifetime),
	}, nil
}

// minimum is the least toAmountMin slippage allows over hops steps: LI.FI
// applies the slippage per step, so toAmount×(1−s)^hops, less one part per
// million of toAmount for the router's own rounding.
func minimum(toAmount *big.Int, bps uint32, hops int) *big.Int {
	num := new(big.Int).Exp(big.NewInt(int64(10000-bps)), big.NewInt(int64(hops)), nil)
	den := new(big.Int).Exp(big.NewInt(10000), big.NewInt(int64(hops)), nil)
	m := new(big.Int).Mul(toAmount, num)
	m.Quo(m, den)
	return m.Sub(m, new(big.Int).Quo(toAmount, big.NewInt(1_000_000)))
}

func mapStep(s *step) (swaps.Step, error) {
	var typ string
	switch s.Type {
	case "swap":
		typ = swaps.StepSwap
	case "cross":
		typ = swaps.StepCross
	case "protocol":
		typ = swaps.StepProtocol
	default:
		return swaps.Step{}, fmt.Errorf("unknown type %q", truncate(s.Type))
	}
	fromChain, err1 := strconv.ParseUint(s.Action.FromChainID.String(), 10, 64)
	toChain, err2 := strconv.ParseUint(s.Action.ToChainID.String(), 10, 64)
	fromToken, err3 := address(s.Action.FromToken.Address)
	toToken, err4 := address(s.Action.ToToken.Address)
	fromAmount, err5 := amount(s.Action.FromAmount)
	toAmount, err6 := amount(s.Estimate.ToAmount)
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return swaps.Step{}, err
	}
	if !printable(s.Tool, 64) {
		return swaps.Step{}, errors.New("tool name")
	}
	return swaps.Step{Type: typ, Tool: s.Tool, FromChainID: fromChain, ToChainID: toChain,
		FromToken: fromToken, ToToken: toToken, FromAmount: fromAmount, ToAmount: toAmount}, nil
}

// mapFees lists the router's fees, then its gas estimates named "gas".
func mapFees(e estimate) ([]swaps.Fee, error) {
	if len(e.FeeCosts)+len(e.GasCosts) > MaxFees {
		return nil, errors.New("too many fees")
	}
	fees := []swaps.Fee{}
	for i, c := range append(append([]cost{}, e.FeeCosts...), e.GasCosts...) {
		name := c.Name
		if i >= len(e.FeeCosts) {
			name = "gas"
		}
		tok, err1 := address(c.Token.Address)
		v, err2 := amount(c.Amount)
		if err := errors.Join(err1, err2); err != nil || !printable(name, 64) || name == "" {
			return nil, fmt.Errorf("fee %d: %v", i, err)
		}
		fees = append(fees, swaps.Fee{Name: name, Token: tok, Amount: v})
	}
	return fees, nil
}

// Wire shape of /status, the fields we use.
type (
	leg struct {
		TxHash  string      `json:"txHash"`
		Amount  string      `json:"amount"`
		Token   *tokenRef   `json:"token"`
		ChainID json.Number `json:"chainId"`
	}
	statusBody struct {
		Status    string `json:"status"`
		Substatus string `json:"substatus"`
		Sending   *leg   `json:"sending"`
		Receiving *leg   `json:"receiving"`
	}
)

// Status asks LI.FI where route rt, sent as txHash, stands.
func (r *Router) Status(ctx context.Context, rt *swaps.Route, txHash common.Hash) (*swaps.Status, error) {
	params := url.Values{
		"txHash":    {txHash.Hex()},
		"fromChain": {strconv.FormatUint(rt.FromChainID, 10)},
		"toChain":   {strconv.FormatUint(rt.ToChainID, 10)},
	}
	for _, s := range rt.Steps {
		if s.Type == swaps.StepCross && s.Tool != "" {
			params.Set("bridge", s.Tool)
			break
		}
	}
	var got statusBody
	err := r.getJSON(ctx, "/status", params, &got)
	if errors.Is(err, errNotFound) {
		return &swaps.Status{Status: swaps.StatusNotFound}, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := mapStatus(rt, txHash, &got)
	if err != nil {
		return nil, fmt.Errorf("%w: lifi: status of %s: %v", swaps.ErrRouteMismatch, txHash.Hex(), err)
	}
	return st, nil
}

func mapStatus(rt *swaps.Route, txHash common.Hash, got *statusBody) (*swaps.Status, error) {
	sub := strings.ToLower(got.Substatus)
	if len(sub) > 64 || strings.Trim(sub, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return nil, fmt.Errorf("substatus %q", truncate(got.Substatus))
	}
	st := &swaps.Status{Substatus: sub}
	switch got.Status {
	case "NOT_FOUND":
		return &swaps.Status{Status: swaps.StatusNotFound}, nil
	case "INVALID":
		st.Status, st.Substatus = swaps.StatusFailed, "invalid"
	case "PENDING":
		st.Status = swaps.StatusPending
	case "DONE":
		st.Status = swaps.StatusDone
	case "FAILED":
		st.Status = swaps.StatusFailed
	default:
		return nil, fmt.Errorf("status %q", truncate(got.Status))
	}
	var err error
	if st.Sending, err = mapLeg(got.Sending, rt.FromChainID); err != nil {
		return nil, fmt.Errorf("sending: %v", err)
	}
	if st.Sending != nil && (st.Sending.TxHash != txHash || st.Sending.ChainID != rt.FromChainID) {
		return nil, errors.New("sending is another transaction")
	}
	if st.Receiving, err = mapLeg(got.Receiving, rt.ToChainID); err != nil {
		return nil, fmt.Errorf("receiving: %v", err)
	}
	// A refund arrives on the source chain; anything else is not this route.
	if st.Receiving != nil && st.Receiving.ChainID != rt.ToChainID && st.Receiving.ChainID != rt.FromChainID {
		return nil, errors.New("receiving is on another chain")
	}
	return st, nil
}

// mapLeg reads one side; a side without a transaction hash has not
// happened yet and is nil.
func mapLeg(l *leg, chain uint64) (*swaps.Leg, error) {
	if l == nil || l.TxHash == "" {
		return nil, nil
	}
	b, err := hexutil.Decode(l.TxHash)
	if err != nil || len(b) != common.HashLength {
		return nil, fmt.Errorf("txHash %q", truncate(l.TxHash))
	}
	out := &swaps.Leg{ChainID: chain, TxHash: common.BytesToHash(b)}
	if l.ChainID != "" {
		if out.ChainID, err = strconv.ParseUint(l.ChainID.String(), 10, 64); err != nil {
			return nil, fmt.Errorf("chainId %q", truncate(l.ChainID.String()))
		}
	}
	if l.Token != nil {
		if out.Token, err = address(l.Token.Address); err != nil {
			return nil, err
		}
	}
	if l.Amount != "" {
		if out.Amount, err = amount(l.Amount); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// errNotFound is a 404 on /status: LI.FI has not seen the transaction.
var errNotFound = errors.New("lifi: not found")

// apiError is LI.FI's error body.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// LI.FI error codes we act on.
const (
	codeNoQuote    = 1002
	codeValidation = 1011
)

// get sends a GET and returns a 2xx response for the caller to read and
// close; every other outcome becomes an error of the swaps vocabulary.
func (r *Router) get(ctx context.Context, path string, params url.Values) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(r.cfg.BaseURL, "/")+path+"?"+params.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: lifi: GET %s: %v", swaps.ErrUnavailable, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if r.cfg.APIKey != "" {
		req.Header.Set("x-lifi-api-key", r.cfg.APIKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		// A *url.Error names the URL, which holds no secret.
		return nil, fmt.Errorf("%w: lifi: GET %s: %v", swaps.ErrUnavailable, path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body apiError
	_ = json.Unmarshal(raw, &body)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, &swaps.RateLimitedError{Router: r.Name(), RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	case path == "/status" && resp.StatusCode == http.StatusNotFound:
		return nil, errNotFound
	case path == "/quote" && (resp.StatusCode == http.StatusNotFound || body.Code == codeNoQuote ||
		resp.StatusCode == http.StatusBadRequest && body.Code == codeValidation):
		return nil, fmt.Errorf("%w: lifi: code %d: %q", swaps.ErrNoRoute, body.Code, truncate(body.Message))
	}
	return nil, fmt.Errorf("%w: lifi: GET %s: HTTP %d, code %d: %q", swaps.ErrUnavailable, path, resp.StatusCode, body.Code, truncate(body.Message))
}

// getJSON is get with the whole (bounded) body decoded into out.
func (r *Router) getJSON(ctx context.Context, path string, params url.Values, out any) error {
	resp, err := r.get(ctx, path, params)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err == nil && len(raw) > MaxResponseBytes {
		err = fmt.Errorf("response over %d bytes", MaxResponseBytes)
	}
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		err = d.Decode(out)
	}
	if err != nil {
		return fmt.Errorf("%w: lifi: GET %s: %v", swaps.ErrUnavailable, path, err)
	}
	return nil
}

// truncate bounds a router-supplied string before it enters an error
// (always through %q, so it cannot forge lines in a log).
func truncate(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// retryAfter reads Retry-After: delay-seconds or an HTTP-date, rounded up to
// whole seconds and clamped.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	var d time.Duration
	if secs, err := strconv.ParseUint(h, 10, 32); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = (t.Sub(now) + time.Second - 1).Truncate(time.Second)
	} else if strings.TrimLeft(h, "0123456789") == "" && h != "" {
		d = maxRetryAfter // digits too many for 32 bits
	}
	return min(max(d, minRetryAfter), maxRetryAfter)
}
