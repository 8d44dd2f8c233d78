package wallets

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/wallets/policy"
)

// TxQuoteRequest is the body of POST /wallets/{id}/transactions/quote.
type TxQuoteRequest struct {
	ChainID uint64 `json:"chainId" minimum:"1" doc:"A chain of the wallet's chainIds" example:"1337"`
	To      string `json:"to" pattern:"^0x[0-9a-fA-F]{40}$" doc:"The recipient's address" example:"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"`
	Asset   string `json:"asset" minLength:"1" maxLength:"42" doc:"ETH (the native coin), a token symbol of the chain (USDC, WETH) or its address" example:"USDC"`
	Amount  string `json:"amount" pattern:"^[0-9]{1,78}$" doc:"Base units as a decimal string (USDC has 6 decimals: 1.5 USDC is 1500000)" example:"1500000"`
}

// TxFields is an EVM transaction as it will be signed (except its nonce and
// fees, fixed when it is signed).
type TxFields struct {
	ChainID uint64 `json:"chainId" example:"1337"`
	From    string `json:"from" example:"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"`
	To      string `json:"to" doc:"The recipient for ETH, the token contract for a token" example:"0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"`
	Value   string `json:"value" doc:"Wei, decimal" example:"0"`
	Data    string `json:"data" doc:"Calldata, hex (an ERC-20 transfer for a token)" example:"0xa9059cbb…"`
	Gas     uint64 `json:"gas" doc:"Gas limit: the estimate plus 20% (exactly 21000 for a plain ETH transfer)" example:"62000"`
}

// NetworkFee is a transaction's fee in the chain's native coin, wei as
// decimal strings. A quote's is the most it can cost; a confirmed
// transaction's amount is what it did.
type NetworkFee struct {
	Asset                string  `json:"asset" example:"ETH"`
	GasLimit             uint64  `json:"gasLimit" example:"62000"`
	MaxFeePerGas         string  `json:"maxFeePerGas" doc:"Twice the latest base fee plus the tip" example:"2000000010"`
	MaxPriorityFeePerGas string  `json:"maxPriorityFeePerGas" example:"1000000"`
	MaxAmount            string  `json:"maxAmount" doc:"gasLimit × maxFeePerGas: the most the fee can be" example:"124000000620000"`
	GasUsed              *uint64 `json:"gasUsed" doc:"Once mined"`
	EffectiveGasPrice    *string `json:"effectiveGasPrice" doc:"Once mined"`
	Amount               *string `json:"amount" doc:"gasUsed × effectiveGasPrice, once mined: what the wallet paid"`
}

// Simulation is what executing the transaction now would do.
type Simulation struct {
	Success      bool    `json:"success"`
	RevertReason *string `json:"revertReason" doc:"Why it would fail, e.g. ERC20: transfer amount exceeds balance, or insufficient ETH for the value and the network fee"`
}

// PolicyPreview is the policy's decision on the quote's intent as the
// policy stands now; the send is decided again when it is created.
type PolicyPreview struct {
	Decision string `json:"decision" enum:"allow,deny,require_approval" example:"allow"`
	Reason   string `json:"reason,omitempty" doc:"Which rule decided, and why"`
}

// TxQuote is a quoted send.
type TxQuote struct {
	ID          string        `json:"id" example:"wtq_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	WalletID    string        `json:"walletId" example:"wal_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	ChainID     uint64        `json:"chainId" example:"1337"`
	To          string        `json:"to" doc:"The recipient" example:"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"`
	Asset       string        `json:"asset" example:"USDC"`
	Amount      string        `json:"amount" doc:"Base units" example:"1500000"`
	Transaction TxFields      `json:"transaction"`
	NetworkFee  NetworkFee    `json:"networkFee"`
	Simulation  Simulation    `json:"simulation"`
	Policy      PolicyPreview `json:"policy"`
	ExpiresAt   time.Time     `json:"expiresAt" doc:"At most 60 seconds ahead"`
	CreatedAt   time.Time     `json:"createdAt"`
}

// call is a transaction a wallet will send: what the quote fixed.
type call struct {
	ChainID uint64
	To      common.Address
	Value   *big.Int
	Data    []byte
	Gas     uint64
}

func (c *call) fields(from common.Address) TxFields {
	return TxFields{ChainID: c.ChainID, From: from.Hex(), To: c.To.Hex(), Value: c.Value.String(), Data: hexutil.Encode(c.Data), Gas: c.Gas}
}

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// parseAmount reads base units: digits only, positive, at most 2^256-1.
func parseAmount(s, location string) (*big.Int, error) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || strings.TrimLeft(s, "0123456789") != "" || n.Sign() <= 0 || n.Cmp(maxUint256) > 0 {
		return nil, apierr.Invalid("Invalid amount.", apierr.Field(location, "a positive whole number of base units (e.g. 1500000 for 1.5 USDC), at most 2^256-1"))
	}
	return n, nil
}

func parseAddress(s, location string) (common.Address, error) {
	if !common.IsHexAddress(s) || !strings.HasPrefix(s, "0x") {
		return common.Address{}, apierr.Invalid("Invalid address.", apierr.Field(location, "an address: 0x and 40 hex digits"))
	}
	return common.HexToAddress(s), nil
}

// QuoteTransaction prices a send: fee estimate, simulation with its revert
// reason, the policy's decision, and an expiry.
func (s *Service) QuoteTransaction(ctx context.Context, sc Scope, walletID string, req TxQuoteRequest) (*TxQuote, error) {
	l, err := s.load(ctx, sc, walletID)
	if err != nil {
		return nil, err
	}
	n, err := s.network(req.ChainID)
	if err != nil {
		return nil, err
	}
	asset, ok := n.Asset(req.Asset)
	if !ok {
		return nil, apierr.Invalid("Unknown asset.", apierr.Field("body.asset", "not an asset of chain %d (%s)", n.ID, assetSymbols(n)))
	}
	to, err := parseAddress(req.To, "body.to")
	if err != nil {
		return nil, err
	}
	amount, err := parseAmount(req.Amount, "body.amount")
	if err != nil {
		return nil, err
	}
	c := &call{ChainID: n.ID, Value: new(big.Int)}
	if asset.IsNative() {
		c.To, c.Value = to, amount
	} else {
		c.To, c.Data = asset.Address, chain.ERC20Call("transfer", to, amount)
	}
	from := common.HexToAddress(l.rec.Address)
	sim, fee, err := s.simulate(ctx, n, from, c)
	if err != nil {
		return nil, err
	}
	intent := policy.Intent{Operation: "transactions.create", ChainID: n.ID, To: c.To, Recipient: to, Asset: asset.Symbol, Amount: amount}
	d := policy.Evaluate(l.policy, intent, l.history(), s.now())
	now := s.now()
	q := &TxQuote{ID: ids.New("wtq", now), WalletID: l.rec.ID, ChainID: n.ID, To: to.Hex(), Asset: asset.Symbol, Amount: amount.String(),
		Transaction: c.fields(from), NetworkFee: fee, Simulation: sim, Policy: PolicyPreview{Decision: d.Action, Reason: d.Reason},
		ExpiresAt: now.Add(TxQuoteTTL).Truncate(time.Second), CreatedAt: now}
	it := store.NewItem(sc.key("wtq", q.ID))
	it.SetDoc(q)
	it["validUntil"] = q.ExpiresAt.UnixMilli()
	it[store.AttrExpiresAt] = q.ExpiresAt.Add(24 * time.Hour).Unix()
	if err := s.st.Put(ctx, it, store.NotExists()); err != nil {
		return nil, fmt.Errorf("wallets: store quote: %w", err)
	}
	return q, nil
}

func assetSymbols(n *chain.Network) string {
	out := make([]string, len(n.Assets))
	for i, a := range n.Assets {
		out[i] = a.Symbol
	}
	return strings.Join(out, ", ")
}

// simulate runs c from the wallet at the latest block and prices it: the
// gas estimate (+20%, or exactly 21000 for a plain transfer), twice the base
// fee plus the tip, and whether the wallet's ETH covers value plus fee.
func (s *Service) simulate(ctx context.Context, n *chain.Network, from common.Address, c *call) (Simulation, NetworkFee, error) {
	msg := ethereum.CallMsg{From: from, To: &c.To, Value: c.Value, Data: c.Data}
	sim := Simulation{Success: true}
	if c.Gas == 0 {
		gas, err := n.Client.EstimateGas(ctx, msg)
		switch reason, reverted := revertReason(err); {
		case reverted:
			sim = Simulation{Success: false, RevertReason: &reason}
			c.Gas = 100_000
		case err != nil:
			return sim, NetworkFee{}, ChainUnavailable("estimate gas", err)
		case gas == 21_000:
			c.Gas = gas
		default:
			c.Gas = gas + gas/5
		}
	}
	tip, feeCap, err := fees(ctx, n.Client)
	if err != nil {
		return sim, NetworkFee{}, err
	}
	max := new(big.Int).Mul(new(big.Int).SetUint64(c.Gas), feeCap)
	fee := NetworkFee{Asset: chain.Native, GasLimit: c.Gas, MaxFeePerGas: feeCap.String(), MaxPriorityFeePerGas: tip.String(), MaxAmount: max.String()}
	if sim.Success {
		bal, err := n.Client.BalanceAt(ctx, from, nil)
		if err != nil {
			return sim, fee, ChainUnavailable("balance", err)
		}
		if bal.Cmp(new(big.Int).Add(max, c.Value)) < 0 {
			why := "insufficient ETH for the value and the network fee"
			sim = Simulation{Success: false, RevertReason: &why}
		}
	}
	return sim, fee, nil
}

// fees are chain.Fees, a failure a 503 to retry.
func fees(ctx context.Context, c chain.Client) (tip, feeCap *big.Int, err error) {
	if tip, feeCap, err = chain.Fees(ctx, c); err != nil {
		return nil, nil, ChainUnavailable("fees", err)
	}
	return tip, feeCap, nil
}

// revertReason reads an execution revert out of a JSON-RPC error: the
// Error(string) reason when the contract gave one.
func revertReason(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	var de rpc.DataError
	if errors.As(err, &de) {
		if data, ok := de.ErrorData().(string); ok {
			if reason, uerr := abi.UnpackRevert(common.FromHex(data)); uerr == nil {
				return reason, true
			}
		}
	}
	msg := err.Error()
	if strings.Contains(msg, "execution reverted") || strings.Contains(msg, "insufficient funds") ||
		strings.Contains(msg, "gas required exceeds") || strings.Contains(msg, "out of gas") {
		return strings.TrimPrefix(msg, "execution reverted: "), true
	}
	return "", false
}

func (s *Service) getTxQuote(ctx context.Context, sc Scope, walletID, id string) (*TxQuote, store.Item, error) {
	it, err := s.st.Get(ctx, sc.key("wtq", id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apierr.Invalid("Unknown quote.", apierr.Field("body.quoteId", "no such quote for this wallet"))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("wallets: read quote: %w", err)
	}
	var q TxQuote
	if err := it.Doc(&q); err != nil {
		return nil, nil, fmt.Errorf("wallets: decode quote: %w", err)
	}
	if q.WalletID != walletID {
		return nil, nil, apierr.Invalid("Unknown quote.", apierr.Field("body.quoteId", "no such quote for this wallet"))
	}
	return &q, it, nil
}

func (q *TxQuote) call() (*call, error) {
	v, ok := new(big.Int).SetString(q.Transaction.Value, 10)
	if !ok {
		return nil, errors.New("wallets: quote value")
	}
	data, err := hexutil.Decode(q.Transaction.Data)
	if err != nil {
		return nil, err
	}
	return &call{ChainID: q.ChainID, To: common.HexToAddress(q.Transaction.To), Value: v, Data: data, Gas: q.Transaction.Gas}, nil
}

func (l *loaded) history() []policy.Spend {
	out := make([]policy.Spend, 0, len(l.spends))
	for _, sp := range l.spends {
		a, _ := new(big.Int).SetString(sp.Amount, 10)
		out = append(out, policy.Spend{Asset: sp.Asset, Amount: a, At: sp.At})
	}
	return out
}
