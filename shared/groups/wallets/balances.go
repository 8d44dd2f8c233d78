package wallets

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/chain"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/wallets/policy"
)

// WalletBalance is one asset's balance on one chain.
type WalletBalance struct {
	ChainID     uint64 `json:"chainId" example:"1337"`
	Asset       string `json:"asset" doc:"The token's address, or ETH for the native coin" example:"0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"`
	Symbol      string `json:"symbol" example:"USDC"`
	Decimals    uint8  `json:"decimals" example:"6"`
	Amount      string `json:"amount" doc:"Base units, decimal" example:"1500000"`
	BlockNumber uint64 `json:"blockNumber" doc:"The block every amount of this chain was read at"`
}

// WalletBalances are a wallet's balances; every amount of a chain is read at one
// block, so they are consistent with each other.
type WalletBalances struct {
	Data        []WalletBalance `json:"data"`
	BlockNumber uint64          `json:"blockNumber" doc:"The block of the first chain (the only one, usually)"`
}

// WalletBalances reads the wallet's balance of every known asset of every chain
// (or of chainID alone, when not 0).
func (s *Service) Balances(ctx context.Context, sc Scope, walletID string, chainID uint64) (*WalletBalances, error) {
	l, err := s.load(ctx, sc, walletID)
	if err != nil {
		return nil, err
	}
	ids := s.nets.IDs()
	if chainID != 0 {
		if _, err := s.network(chainID); err != nil {
			return nil, err
		}
		ids = []uint64{chainID}
	}
	if len(ids) == 0 {
		return nil, apierr.New(apierr.ServiceUnavailable, "No chain is configured in this deployment.")
	}
	owner := common.HexToAddress(l.rec.Address)
	out := &WalletBalances{Data: []WalletBalance{}}
	for i, id := range ids {
		n, _ := s.nets.Get(id)
		block, err := n.Client.BlockNumber(ctx)
		if err != nil {
			return nil, ChainUnavailable("block number", err)
		}
		at := new(big.Int).SetUint64(block)
		if i == 0 {
			out.BlockNumber = block
		}
		for _, a := range n.Assets {
			amount, err := s.balanceOf(ctx, n.Client, a.Address, owner, at)
			if err != nil {
				return nil, err
			}
			asset := a.Symbol
			if !a.IsNative() {
				asset = a.Address.Hex()
			}
			out.Data = append(out.Data, WalletBalance{ChainID: id, Asset: asset, Symbol: a.Symbol, Decimals: a.Decimals, Amount: amount.String(), BlockNumber: block})
		}
	}
	return out, nil
}

// balanceOf is chain.BalanceOf, a failure a 503 to retry.
func (s *Service) balanceOf(ctx context.Context, c chain.Client, token, owner common.Address, block *big.Int) (*big.Int, error) {
	b, err := chain.BalanceOf(ctx, c, token, owner, block)
	if err != nil {
		return nil, ChainUnavailable("balance", err)
	}
	return b, nil
}

// WalletPolicyRequest is the body of PATCH /wallets/{id}/policy: a whole new
// policy, applied only over the revision the caller read.
type WalletPolicyRequest struct {
	DefaultAction    string        `json:"defaultAction" enum:"allow,deny,require_approval"`
	Rules            []policy.Rule `json:"rules" maxItems:"50"`
	ExpectedRevision int64         `json:"expectedRevision" minimum:"1" doc:"The policy revision this replacement is based on; another one is 409 policy_revision_conflict"`
}

// UpdatePolicy replaces the wallet's policy (one conditional write: safe to
// defer into the idempotent response's transaction).
func (s *Service) UpdatePolicy(ctx context.Context, sc Scope, walletID string, req WalletPolicyRequest) (*Wallet, error) {
	l, err := s.load(ctx, sc, walletID)
	if err != nil {
		return nil, err
	}
	p, err := policy.Normalize(policy.Policy{Revision: req.ExpectedRevision + 1, DefaultAction: req.DefaultAction, Rules: req.Rules})
	if err != nil {
		return nil, err
	}
	conflict := apierr.New(apierr.PolicyRevisionConflict, "The policy is at revision %d, not %d: read it again and reapply your change.", l.policy.Revision, req.ExpectedRevision)
	if l.policy.Revision != req.ExpectedRevision {
		return nil, conflict
	}
	// The revision is checked again when the write commits (with the
	// idempotent response): a concurrent replacement loses with the same
	// answer as a stale one.
	err = idempotency.Transact(ctx, s.st, []store.Op{store.UpdateOp(l.item.Key(),
		store.Update{Set: map[string]any{"policy": store.DocOf(p), "prev": p.Revision}, Add: map[string]int64{"rev": 1}},
		store.AttrEquals("prev", req.ExpectedRevision))}, func(int) error { return conflict })
	if errors.Is(err, conflict) {
		return nil, conflict
	}
	if err != nil {
		return nil, fmt.Errorf("wallets: update policy: %w", err)
	}
	l.policy = p
	return s.view(l), nil
}
