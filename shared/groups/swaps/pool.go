package swaps

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"platformapi/shared/base/chain"
)

// Pool is the router of the local development chain: real on-chain swaps
// through its constant-product pool (package contracts). A quote is the
// pool's getAmountOut at the latest block; the swap transaction carries
// minAmountOut (the quote less the slippage) and a deadline, so a price
// that moved further reverts on chain with nothing but gas spent.
type Pool struct {
	Networks *chain.Networks
	Now      func() time.Time
}

// PoolGas is the swap's gas limit: it cannot be estimated before its
// approval is mined (transferFrom would revert). A first swap of an
// address measured about 227,000 gas on the local chain.
const PoolGas = 400_000

// PoolDeadline is how long a pool swap transaction stays valid on chain:
// long enough for its approval to be mined first.
const PoolDeadline = 10 * time.Minute

// poolABIJSON is the ABI of the local chain's Pool (a copy of
// shared/base/chain/contracts/build/Pool.abi, kept equal by a test): the
// contract's generated bindings would link its deployment code into every
// function that swaps, where only the ABI is needed.
//
//go:embed pool.abi
var poolABIJSON string

var poolABI = chain.MustABI(poolABIJSON)

// Name implements Router.
func (p *Pool) Name() string { return "pool" }

func (p *Pool) network(chainID uint64) (*chain.Network, error) {
	n, ok := p.Networks.Get(chainID)
	if !ok || n.Pool == (common.Address{}) {
		return nil, ErrNoRoute
	}
	return n, nil
}

// Tokens implements Router: the pool's two tokens.
func (p *Pool) Tokens(ctx context.Context, chainID uint64) ([]Token, error) {
	n, err := p.network(chainID)
	if err != nil {
		return []Token{}, nil
	}
	var out []Token
	for _, a := range n.Assets {
		if !a.IsNative() {
			out = append(out, Token{ChainID: chainID, Address: a.Address, Symbol: a.Symbol, Name: a.Name, Decimals: a.Decimals})
		}
	}
	return out, nil
}

// Quote implements Router.
func (p *Pool) Quote(ctx context.Context, q QuoteRequest) (*Route, error) {
	if q.FromChainID != q.ToChainID {
		return nil, ErrNoRoute
	}
	n, err := p.network(q.FromChainID)
	if err != nil {
		return nil, err
	}
	if q.FromToken == q.ToToken || !p.pooled(n, q.FromToken) || !p.pooled(n, q.ToToken) {
		return nil, ErrNoRoute
	}
	data, err := poolABI.Pack("getAmountOut", q.FromToken, q.FromAmount)
	if err != nil {
		return nil, err
	}
	out, err := n.Client.CallContract(ctx, ethereum.CallMsg{To: &n.Pool, Data: data}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: pool quote: %v", ErrUnavailable, err)
	}
	if len(out) != 32 {
		return nil, fmt.Errorf("%w: pool quote answered %d bytes", ErrUnavailable, len(out))
	}
	toAmount := new(big.Int).SetBytes(out)
	if toAmount.Sign() == 0 {
		return nil, ErrNoRoute
	}
	minOut := new(big.Int).Mul(toAmount, big.NewInt(int64(10_000-q.SlippageBps)))
	minOut.Quo(minOut, big.NewInt(10_000))
	if minOut.Sign() == 0 {
		minOut.SetInt64(1)
	}
	now := p.Now()
	deadline := now.Add(PoolDeadline)
	swap, err := poolABI.Pack("swapExactIn", q.FromToken, q.FromAmount, minOut, q.FromAddress, big.NewInt(deadline.Unix()))
	if err != nil {
		return nil, err
	}
	fee := new(big.Int).Mul(q.FromAmount, big.NewInt(30))
	fee.Quo(fee, big.NewInt(10_000))
	return &Route{Router: p.Name(), FromChainID: n.ID, ToChainID: n.ID, FromToken: q.FromToken, ToToken: q.ToToken,
		FromAmount: new(big.Int).Set(q.FromAmount), ToAmount: toAmount, ToAmountMin: minOut,
		Steps:       []Step{{Type: StepSwap, Tool: "pool", FromChainID: n.ID, ToChainID: n.ID, FromToken: q.FromToken, ToToken: q.ToToken, FromAmount: q.FromAmount, ToAmount: toAmount}},
		Approval:    &Approval{Token: q.FromToken, Spender: n.Pool, Amount: new(big.Int).Set(q.FromAmount)},
		Transaction: TxRequest{ChainID: n.ID, From: q.FromAddress, To: n.Pool, Data: swap, Value: new(big.Int), Gas: PoolGas},
		Fees:        []Fee{{Name: "pool (0.3%)", Token: q.FromToken, Amount: fee}},
		Deadline:    deadline,
	}, nil
}

func (p *Pool) pooled(n *chain.Network, token common.Address) bool {
	a, ok := n.AssetAt(token)
	return ok && !a.IsNative()
}

// Status implements Router: the chain's receipt of the swap transaction;
// what was received is the Swap event's amountOut.
func (p *Pool) Status(ctx context.Context, r *Route, txHash common.Hash) (*Status, error) {
	n, err := p.network(r.FromChainID)
	if err != nil {
		return nil, err
	}
	sending := &Leg{ChainID: n.ID, TxHash: txHash, Token: r.FromToken}
	rc, err := n.Client.TransactionReceipt(ctx, txHash)
	if chain.NotYet(err) {
		if _, pending, terr := n.Client.TransactionByHash(ctx, txHash); terr == nil && pending {
			return &Status{Status: StatusPending, Substatus: "wait_source_confirmations", Sending: sending}, nil
		}
		return &Status{Status: StatusNotFound}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: receipt: %v", ErrUnavailable, err)
	}
	if rc.Status != types.ReceiptStatusSuccessful {
		return &Status{Status: StatusFailed, Substatus: "reverted", Sending: sending}, nil
	}
	for _, l := range rc.Logs {
		if l.Address != n.Pool || len(l.Topics) == 0 || l.Topics[0] != poolABI.Events["Swap"].ID {
			continue
		}
		ev, err := poolABI.Unpack("Swap", l.Data)
		if err != nil || len(ev) < 3 {
			continue
		}
		in, _ := ev[0].(*big.Int)
		out, _ := ev[1].(*big.Int)
		sending.Amount = in
		return &Status{Status: StatusDone, Substatus: "completed", Sending: sending,
			Receiving: &Leg{ChainID: n.ID, TxHash: txHash, Token: r.ToToken, Amount: out}}, nil
	}
	return nil, errors.New("swaps: a successful pool swap without its Swap event")
}

// Dispatch routes each chain to its router: the local pool where a chain
// has one, Default (LI.FI) elsewhere.
type Dispatch struct {
	Local   *Pool
	Default Router // nil: no router for other chains
}

func (d *Dispatch) pick(chainID uint64) Router {
	if d.Local != nil {
		if n, ok := d.Local.Networks.Get(chainID); ok && n.Pool != (common.Address{}) {
			return d.Local
		}
	}
	return d.Default
}

// Name implements Router.
func (d *Dispatch) Name() string { return "dispatch" }

// Tokens implements Router.
func (d *Dispatch) Tokens(ctx context.Context, chainID uint64) ([]Token, error) {
	if r := d.pick(chainID); r != nil {
		return r.Tokens(ctx, chainID)
	}
	return []Token{}, nil
}

// Quote implements Router.
func (d *Dispatch) Quote(ctx context.Context, q QuoteRequest) (*Route, error) {
	if r := d.pick(q.FromChainID); r != nil {
		return r.Quote(ctx, q)
	}
	return nil, ErrNoRoute
}

// Status implements Router: by the router that quoted the route.
func (d *Dispatch) Status(ctx context.Context, r *Route, txHash common.Hash) (*Status, error) {
	if d.Local != nil && r.Router == d.Local.Name() {
		return d.Local.Status(ctx, r, txHash)
	}
	if d.Default != nil && r.Router == d.Default.Name() {
		return d.Default.Status(ctx, r, txHash)
	}
	return nil, fmt.Errorf("%w: no router %q", ErrUnavailable, r.Router)
}
