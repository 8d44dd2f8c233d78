package swaps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"platformapi/shared/adapters/outbox"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/paging"
	"platformapi/shared/groups/wallets"
)

// ServiceID is the managed service of swaps (approvals name it).
const ServiceID = "universal-swaps"

// Limits.
const (
	// QuoteTTL is how long a swap quote can be executed or prepared.
	QuoteTTL = 30 * time.Second
	// DefaultSlippageBps applies when a quote names none (0.5%).
	DefaultSlippageBps = 50
	// MaxSlippageBps bounds what a caller may accept (50%).
	MaxSlippageBps = 5000
	// swapGas is a swap's limit when the router gives none.
	swapGas = 500_000
)

// Config are the service's dependencies.
type Config struct {
	Store   store.Store
	Wallets *wallets.Service
	Router  Router
	// Outbox records each swap.<status> event in the transaction of the
	// change it announces.
	Outbox     outbox.Recorder
	PriceMicro int64
	Now        func() time.Time
	Logger     *slog.Logger
}

// Service is universal swaps: quotes from a router, execution from managed
// wallets as wallet transactions, unsigned swaps for outside wallets, and
// route status.
//
// Storage (account partition; <p> is the project or "-"):
//
//	acct#<acct> | swq#<p>#<id>       a quote: doc, route, validUntil (ms), used, usedBy
//	acct#<acct> | rte#<p>#<routeId>  a route: doc (route, who may send it, accepted hash)
//	acct#<acct> | swp#<p>#<id>       a swap: doc, rev, status
type Service struct {
	cfg Config
	now func() time.Time
}

// New builds the service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{cfg: cfg, now: func() time.Time { return cfg.Now().UTC() }}
}

// Price is what swaps.execute costs, in micro-credits.
func (s *Service) Price() int64 { return s.cfg.PriceMicro }

func key(sc wallets.Scope, kind, id string) store.Key {
	p := sc.ProjectID
	if p == "" {
		p = "-"
	}
	return store.Key{PK: "acct#" + sc.AccountID, SK: kind + "#" + p + "#" + id}
}

// TokenView is a swappable token.
type TokenView struct {
	ChainID  uint64 `json:"chainId" example:"1337"`
	Address  string `json:"address" doc:"0x0000000000000000000000000000000000000000 for the native coin"`
	Symbol   string `json:"symbol" example:"USDC"`
	Name     string `json:"name" example:"USD Coin"`
	Decimals uint8  `json:"decimals" example:"6"`
}

// Tokens lists the router's tokens of a chain, a page at a time.
func (s *Service) Tokens(ctx context.Context, chainID uint64, limit int, cursor string) ([]TokenView, string, error) {
	pos, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	offset := 0
	if pos != "" {
		if offset, err = strconv.Atoi(pos); err != nil || offset < 0 {
			return nil, "", apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this list"))
		}
	}
	ts, err := s.cfg.Router.Tokens(ctx, chainID)
	if err != nil {
		return nil, "", routerErr(err)
	}
	out := []TokenView{}
	for i := offset; i < len(ts) && len(out) < limit; i++ {
		t := ts[i]
		out = append(out, TokenView{ChainID: t.ChainID, Address: t.Address.Hex(), Symbol: t.Symbol, Name: t.Name, Decimals: t.Decimals})
	}
	if offset+len(out) < len(ts) {
		return out, paging.Cursor(strconv.Itoa(offset + len(out))), nil
	}
	return out, "", nil
}

// routerErr maps a router's failure to the API's errors.
func routerErr(err error) error {
	var rl *RateLimitedError
	switch {
	case errors.As(err, &rl):
		return apierr.New(apierr.UpstreamRateLimited, "The swap router asked to wait.").WithHeader("Retry-After", strconv.Itoa(int(max(time.Second, rl.RetryAfter).Seconds())))
	case errors.Is(err, ErrNoRoute):
		return apierr.New(apierr.NoRoute, "No route for this pair and amount.")
	case errors.Is(err, ErrUnavailable):
		e := apierr.New(apierr.ServiceUnavailable, "The swap router is unavailable; retry later.").WithHeader("Retry-After", "2")
		e.Cause = err
		return e
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	return err
}

// SwapQuoteRequest is the body of POST /swaps/quote.
type SwapQuoteRequest struct {
	WalletID    *string `json:"walletId,omitempty" doc:"A managed wallet of the caller: the swap is executed with POST /swaps"`
	FromAddress *string `json:"fromAddress,omitempty" pattern:"^0x[0-9a-fA-F]{40}$" doc:"Or the caller's own address: the swap is built unsigned with POST /swaps/prepare"`
	FromChainID uint64  `json:"fromChainId" minimum:"1" example:"1337"`
	ToChainID   uint64  `json:"toChainId" minimum:"1" example:"1337"`
	FromToken   string  `json:"fromToken" minLength:"1" maxLength:"42" doc:"Token address, or a symbol the chain knows (USDC, WETH)" example:"USDC"`
	ToToken     string  `json:"toToken" minLength:"1" maxLength:"42" example:"WETH"`
	FromAmount  string  `json:"fromAmount" pattern:"^[0-9]{1,78}$" doc:"Base units of fromToken" example:"2500000000"`
	SlippageBps *uint32 `json:"slippageBps,omitempty" minimum:"1" maximum:"5000" doc:"The most the price may move against you, in basis points (default 50 = 0.5%)"`
}

// StepView is one step of a route.
type StepView struct {
	Type        string `json:"type" enum:"swap,cross,protocol"`
	Tool        string `json:"tool" example:"pool"`
	FromChainID uint64 `json:"fromChainId"`
	ToChainID   uint64 `json:"toChainId"`
	FromToken   string `json:"fromToken"`
	ToToken     string `json:"toToken"`
	FromAmount  string `json:"fromAmount"`
	ToAmount    string `json:"toAmount"`
}

// ApprovalNeed says whether the route needs a token allowance first.
type ApprovalNeed struct {
	Required bool    `json:"required" doc:"The sender's allowance to spender is below fromAmount"`
	Spender  *string `json:"spender" doc:"The contract that will spend fromToken; null for a native input"`
	Token    *string `json:"token"`
	Amount   *string `json:"amount" doc:"Exactly fromAmount: the approval is never unlimited"`
}

// FeeView is one fee of a route, in base units of its token.
type FeeView struct {
	Name   string `json:"name"`
	Token  string `json:"token"`
	Amount string `json:"amount"`
}

// BalanceIssue reports a sender who holds less than the swap needs.
type BalanceIssue struct {
	Token    string `json:"token"`
	Required string `json:"required"`
	Actual   string `json:"actual"`
}

// Issues are what would make the swap fail as things stand.
type Issues struct {
	Balance *BalanceIssue `json:"balance" doc:"The sender holds less fromToken than fromAmount"`
}

// SwapQuote is a quote, bound to a wallet or an address and used once.
type SwapQuote struct {
	ID          string       `json:"id" example:"swq_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	RouteID     string       `json:"routeId" example:"rte_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	WalletID    *string      `json:"walletId"`
	FromAddress string       `json:"fromAddress"`
	Router      string       `json:"router" example:"pool"`
	FromChainID uint64       `json:"fromChainId"`
	ToChainID   uint64       `json:"toChainId"`
	FromToken   string       `json:"fromToken"`
	ToToken     string       `json:"toToken"`
	FromAmount  string       `json:"fromAmount"`
	ToAmount    string       `json:"toAmount" doc:"The expected output at the quoted price"`
	ToAmountMin string       `json:"toAmountMin" doc:"The least the swap delivers, or it fails: toAmount less the slippage"`
	SlippageBps uint32       `json:"slippageBps"`
	Steps       []StepView   `json:"steps"`
	Approval    ApprovalNeed `json:"approval"`
	Fees        []FeeView    `json:"fees"`
	Issues      Issues       `json:"issues"`
	ExpiresAt   time.Time    `json:"expiresAt" doc:"At most 30 seconds ahead"`
	CreatedAt   time.Time    `json:"createdAt"`
}

// routeRec is a quoted route as stored.
type routeRec struct {
	ID          string          `json:"id"`
	QuoteID     string          `json:"quoteId"`
	WalletID    string          `json:"walletId,omitempty"`
	FromAddress string          `json:"fromAddress"`
	Route       *Route          `json:"route"`
	TxHash      string          `json:"txHash,omitempty"`
	Quote       json.RawMessage `json:"quote"`
}

// resolveToken reads a token as an address or a symbol of the chain.
func (s *Service) resolveToken(chainID uint64, v, location string) (common.Address, error) {
	if common.IsHexAddress(v) && strings.HasPrefix(v, "0x") {
		return common.HexToAddress(v), nil
	}
	if n, ok := s.cfg.Wallets.Networks().Get(chainID); ok {
		if a, ok := n.Asset(v); ok {
			return a.Address, nil
		}
	}
	return common.Address{}, apierr.Invalid("Unknown token.", apierr.Field(location, "a token address (0x…) or a symbol of chain %d", chainID))
}

func (s *Service) symbol(chainID uint64, token common.Address) string {
	if n, ok := s.cfg.Wallets.Networks().Get(chainID); ok {
		if a, ok := n.AssetAt(token); ok {
			return a.Symbol
		}
	}
	return token.Hex()
}

// Quote asks the router for a route, bound to the wallet or address, and
// reports the approval it needs and a balance that falls short.
func (s *Service) Quote(ctx context.Context, sc wallets.Scope, req SwapQuoteRequest) (*SwapQuote, error) {
	if (req.WalletID == nil) == (req.FromAddress == nil) {
		return nil, apierr.Invalid("Name the sender.", apierr.Field("body.walletId", "exactly one of walletId and fromAddress"))
	}
	var from common.Address
	if req.WalletID != nil {
		a, err := s.cfg.Wallets.Address(ctx, sc, *req.WalletID)
		if err != nil {
			return nil, err
		}
		from = a
	} else {
		from = common.HexToAddress(*req.FromAddress)
	}
	fromToken, err := s.resolveToken(req.FromChainID, req.FromToken, "body.fromToken")
	if err != nil {
		return nil, err
	}
	toToken, err := s.resolveToken(req.ToChainID, req.ToToken, "body.toToken")
	if err != nil {
		return nil, err
	}
	amount, ok := new(big.Int).SetString(req.FromAmount, 10)
	if !ok || amount.Sign() <= 0 {
		return nil, apierr.Invalid("Invalid amount.", apierr.Field("body.fromAmount", "a positive whole number of base units"))
	}
	slip := uint32(DefaultSlippageBps)
	if req.SlippageBps != nil {
		slip = *req.SlippageBps
	}
	route, err := s.cfg.Router.Quote(ctx, QuoteRequest{FromChainID: req.FromChainID, ToChainID: req.ToChainID, FromToken: fromToken, ToToken: toToken,
		FromAmount: amount, FromAddress: from, SlippageBps: slip})
	if err != nil {
		return nil, routerErr(err)
	}
	now := s.now()
	q := &SwapQuote{ID: ids.New("swq", now), RouteID: ids.New("rte", now), WalletID: req.WalletID, FromAddress: from.Hex(), Router: route.Router,
		FromChainID: route.FromChainID, ToChainID: route.ToChainID, FromToken: route.FromToken.Hex(), ToToken: route.ToToken.Hex(),
		FromAmount: route.FromAmount.String(), ToAmount: route.ToAmount.String(), ToAmountMin: route.ToAmountMin.String(), SlippageBps: slip,
		Steps: []StepView{}, Fees: []FeeView{}, ExpiresAt: now.Add(QuoteTTL).Truncate(time.Second), CreatedAt: now}
	if !route.Deadline.IsZero() && route.Deadline.Before(q.ExpiresAt) {
		q.ExpiresAt = route.Deadline
	}
	for _, st := range route.Steps {
		q.Steps = append(q.Steps, StepView{Type: st.Type, Tool: st.Tool, FromChainID: st.FromChainID, ToChainID: st.ToChainID,
			FromToken: st.FromToken.Hex(), ToToken: st.ToToken.Hex(), FromAmount: bigString(st.FromAmount), ToAmount: bigString(st.ToAmount)})
	}
	for _, f := range route.Fees {
		q.Fees = append(q.Fees, FeeView{Name: f.Name, Token: f.Token.Hex(), Amount: bigString(f.Amount)})
	}
	if err := s.checkSender(ctx, q, route, from); err != nil {
		return nil, err
	}
	quoteDoc, _ := json.Marshal(q)
	rr := routeRec{ID: q.RouteID, QuoteID: q.ID, FromAddress: from.Hex(), Route: route, Quote: quoteDoc}
	if req.WalletID != nil {
		rr.WalletID = *req.WalletID
	}
	qit := store.NewItem(key(sc, "swq", q.ID))
	qit.SetDoc(q)
	qit["validUntil"] = q.ExpiresAt.UnixMilli()
	qit[store.AttrExpiresAt] = q.ExpiresAt.Add(24 * time.Hour).Unix()
	rit := store.NewItem(key(sc, "rte", q.RouteID))
	rit.SetDoc(rr)
	rit[store.AttrExpiresAt] = q.ExpiresAt.Add(30 * 24 * time.Hour).Unix()
	if err := s.cfg.Store.Transact(ctx, []store.Op{store.PutOp(qit, store.NotExists()), store.PutOp(rit, store.NotExists())}); err != nil {
		return nil, fmt.Errorf("swaps: store quote: %w", err)
	}
	return q, nil
}

func bigString(n *big.Int) string {
	if n == nil {
		return "0"
	}
	return n.String()
}

// checkSender fills the quote's approval need and balance issue from the
// chain, when this deployment reaches the source chain.
func (s *Service) checkSender(ctx context.Context, q *SwapQuote, r *Route, from common.Address) error {
	if r.Approval != nil {
		sp, tok, amt := r.Approval.Spender.Hex(), r.Approval.Token.Hex(), r.Approval.Amount.String()
		q.Approval = ApprovalNeed{Required: true, Spender: &sp, Token: &tok, Amount: &amt}
	}
	n, ok := s.cfg.Wallets.Networks().Get(r.FromChainID)
	if !ok {
		return nil // the router alone knows this chain: the approval is assumed needed
	}
	if r.Approval != nil {
		allowance, err := call(ctx, n.Client, r.Approval.Token, chain.ERC20Call("allowance", from, r.Approval.Spender))
		if err != nil {
			return err
		}
		q.Approval.Required = allowance.Cmp(r.Approval.Amount) < 0
	}
	have, err := chain.BalanceOf(ctx, n.Client, r.FromToken, from, nil)
	if err != nil {
		return wallets.ChainUnavailable("contract read", err)
	}
	if have.Cmp(r.FromAmount) < 0 {
		q.Issues.Balance = &BalanceIssue{Token: r.FromToken.Hex(), Required: r.FromAmount.String(), Actual: have.String()}
	}
	return nil
}

// call reads one uint256 from a contract at the latest block; a failure is
// a 503 to retry.
func call(ctx context.Context, c chain.Client, to common.Address, data []byte) (*big.Int, error) {
	n, err := chain.Uint256(ctx, c, to, data, nil)
	if err != nil {
		return nil, wallets.ChainUnavailable("contract read", err)
	}
	return n, nil
}

func (s *Service) loadQuote(ctx context.Context, sc wallets.Scope, id string) (*SwapQuote, store.Item, *routeRec, error) {
	unknown := apierr.Invalid("Unknown quote.", apierr.Field("body.quoteId", "no such swap quote"))
	if !ids.Valid("swq", id) {
		return nil, nil, nil, unknown
	}
	it, err := s.cfg.Store.Get(ctx, key(sc, "swq", id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil, unknown
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("swaps: read quote: %w", err)
	}
	var q SwapQuote
	if err := it.Doc(&q); err != nil {
		return nil, nil, nil, err
	}
	rr, err := s.loadRoute(ctx, sc, q.RouteID)
	if err != nil {
		return nil, nil, nil, err
	}
	return &q, it, rr, nil
}

func (s *Service) loadRoute(ctx context.Context, sc wallets.Scope, id string) (*routeRec, error) {
	it, err := s.cfg.Store.Get(ctx, key(sc, "rte", id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.New(apierr.NotFound, "No such route.")
	}
	if err != nil {
		return nil, fmt.Errorf("swaps: read route: %w", err)
	}
	var rr routeRec
	if err := it.Doc(&rr); err != nil {
		return nil, err
	}
	return &rr, nil
}

var (
	errQuoteUsed    = apierr.New(apierr.QuoteAlreadyUsed, "This quote was already executed; quote again.")
	errQuoteExpired = apierr.New(apierr.QuoteExpired, "This quote expired; quote again.")
)

// UnsignedTx is a transaction for the caller's own wallet to sign.
type UnsignedTx struct {
	ChainID uint64 `json:"chainId"`
	From    string `json:"from"`
	To      string `json:"to"`
	Data    string `json:"data"`
	Value   string `json:"value" doc:"Wei, decimal"`
	Gas     uint64 `json:"gas" doc:"A gas limit that covers it (0: estimate it yourself)"`
}

// Prepared is an unsigned swap.
type Prepared struct {
	RouteID             string      `json:"routeId"`
	ExpiresAt           time.Time   `json:"expiresAt" doc:"Send the transaction before this; the quote's expiry"`
	ApprovalTransaction *UnsignedTx `json:"approvalTransaction" doc:"An exact-amount approve to send first, when the allowance is short; null otherwise"`
	Transaction         UnsignedTx  `json:"transaction"`
	ToAmountMin         string      `json:"toAmountMin"`
}

// Prepare builds the unsigned transactions of an address-bound quote. No
// key of ours is involved and nothing is charged; preparing again returns
// the same transactions.
func (s *Service) Prepare(ctx context.Context, sc wallets.Scope, quoteID string) (*Prepared, error) {
	q, _, rr, err := s.loadQuote(ctx, sc, quoteID)
	if err != nil {
		return nil, err
	}
	if q.WalletID != nil {
		return nil, apierr.Invalid("This quote is for a managed wallet.", apierr.Field("body.quoteId", "execute a wallet's quote with POST /swaps"))
	}
	if !s.now().Before(q.ExpiresAt) {
		return nil, errQuoteExpired
	}
	r := rr.Route
	out := &Prepared{RouteID: rr.ID, ExpiresAt: q.ExpiresAt, ToAmountMin: r.ToAmountMin.String(),
		Transaction: UnsignedTx{ChainID: r.Transaction.ChainID, From: rr.FromAddress, To: r.Transaction.To.Hex(), Data: hexutil.Encode(r.Transaction.Data),
			Value: bigString(r.Transaction.Value), Gas: r.Transaction.Gas}}
	if r.Approval != nil {
		need := true
		if n, ok := s.cfg.Wallets.Networks().Get(r.FromChainID); ok {
			allowance, err := call(ctx, n.Client, r.Approval.Token, chain.ERC20Call("allowance", common.HexToAddress(rr.FromAddress), r.Approval.Spender))
			if err != nil {
				return nil, err
			}
			need = allowance.Cmp(r.Approval.Amount) < 0
		}
		if need {
			data := chain.ERC20Call("approve", r.Approval.Spender, r.Approval.Amount)
			var gas uint64
			if n, ok := s.cfg.Wallets.Networks().Get(r.FromChainID); ok {
				from := common.HexToAddress(rr.FromAddress)
				if est, err := n.Client.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &r.Approval.Token, Data: data}); err == nil {
					gas = est + est/5
				}
			}
			out.ApprovalTransaction = &UnsignedTx{ChainID: r.FromChainID, From: rr.FromAddress, To: r.Approval.Token.Hex(),
				Data: hexutil.Encode(data), Value: "0", Gas: gas}
		}
	}
	return out, nil
}

// Wire builds managed wallets and swaps together: a swap hears of each
// move of its wallet transactions (wc.OnSwapTx is set here), so every
// process that advances wallet transactions refreshes their swaps.
func Wire(wc wallets.Config, sc Config) (*wallets.Service, *Service) {
	var sw *Service
	wc.OnSwapTx = func(ctx context.Context, scope wallets.Scope, swapID string) {
		if _, err := sw.Refresh(ctx, scope, swapID); err != nil {
			sw.cfg.Logger.Error("swaps: refresh", "swap", swapID, "error", err.Error())
		}
	}
	ws := wallets.New(wc)
	sc.Wallets = ws
	sw = New(sc)
	return ws, sw
}
