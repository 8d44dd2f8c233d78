// Package chain is the EVM chain port: the few JSON-RPC calls managed wallets
// and swaps make, and the networks a deployment reaches with the assets it
// knows on each. Two adapters satisfy Client: go-ethereum's ethclient over
// JSON-RPC (RPC_URL_<chainId>, Dial) and the same client attached in
// process to the local development chain (package devchain, linked only
// into functions/local and tests).
package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
)

// Client is what the wallets and swaps services ask of a chain. An
// *ethclient.Client is one.
type Client interface {
	BlockNumber(ctx context.Context) (uint64, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	BalanceAt(ctx context.Context, account common.Address, block *big.Int) (*big.Int, error)
	NonceAt(ctx context.Context, account common.Address, block *big.Int) (uint64, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	CallContract(ctx context.Context, msg ethereum.CallMsg, block *big.Int) ([]byte, error)
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
	TransactionByHash(ctx context.Context, hash common.Hash) (*types.Transaction, bool, error)
}

// Native is the asset symbol of a chain's own coin (the zero address).
const Native = "ETH"

// Asset is a token the API sends and reports balances of on one network.
type Asset struct {
	Symbol   string
	Name     string
	Address  common.Address // zero for the native coin
	Decimals uint8
}

// IsNative reports whether a is the chain's own coin.
func (a Asset) IsNative() bool { return a.Address == (common.Address{}) }

// Network is one configured chain.
type Network struct {
	ID     uint64
	Client Client
	// Assets are the native coin first, then the known tokens.
	Assets []Asset
	// Pool is the local chain's constant-product pool (zero elsewhere).
	Pool common.Address
}

// Asset finds an asset by symbol (case-insensitive) or token address.
func (n *Network) Asset(symbolOrAddress string) (Asset, bool) {
	for _, a := range n.Assets {
		if strings.EqualFold(a.Symbol, symbolOrAddress) {
			return a, true
		}
		if common.IsHexAddress(symbolOrAddress) && !a.IsNative() && common.HexToAddress(symbolOrAddress) == a.Address {
			return a, true
		}
	}
	return Asset{}, false
}

// AssetAt finds an asset by its address (zero: the native coin).
func (n *Network) AssetAt(addr common.Address) (Asset, bool) {
	for _, a := range n.Assets {
		if a.Address == addr {
			return a, true
		}
	}
	return Asset{}, false
}

// Networks are the chains of a deployment by id.
type Networks struct {
	byID map[uint64]*Network
}

// NewNetworks indexes ns; a repeated id is a configuration error.
func NewNetworks(ns ...*Network) (*Networks, error) {
	out := &Networks{byID: map[uint64]*Network{}}
	for _, n := range ns {
		if _, dup := out.byID[n.ID]; dup {
			return nil, fmt.Errorf("chain: network %d configured twice", n.ID)
		}
		out.byID[n.ID] = n
	}
	return out, nil
}

// Get is the network with this id; false when the deployment has none.
func (ns *Networks) Get(id uint64) (*Network, bool) {
	if ns == nil {
		return nil, false
	}
	n, ok := ns.byID[id]
	return n, ok
}

// With is ns and n together; n's id must be new.
func (ns *Networks) With(n *Network) (*Networks, error) {
	all := []*Network{n}
	if ns != nil {
		for _, m := range ns.byID {
			all = append(all, m)
		}
	}
	return NewNetworks(all...)
}

// IDs are the configured chain ids, ascending.
func (ns *Networks) IDs() []uint64 {
	if ns == nil {
		return nil
	}
	ids := make([]uint64, 0, len(ns.byID))
	for id := range ns.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Known tokens of public networks: USDC and WETH where the API can send
// and swap them. Other chain ids configured with RPC_URL_<id> have only
// their native coin.
var knownAssets = map[uint64][]Asset{
	1: {
		{Symbol: "USDC", Name: "USD Coin", Address: common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"), Decimals: 6},
		{Symbol: "WETH", Name: "Wrapped Ether", Address: common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"), Decimals: 18},
	},
	8453: {
		{Symbol: "USDC", Name: "USD Coin", Address: common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"), Decimals: 6},
		{Symbol: "WETH", Name: "Wrapped Ether", Address: common.HexToAddress("0x4200000000000000000000000000000000000006"), Decimals: 18},
	},
	84532: {
		{Symbol: "USDC", Name: "USD Coin", Address: common.HexToAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e"), Decimals: 6},
		{Symbol: "WETH", Name: "Wrapped Ether", Address: common.HexToAddress("0x4200000000000000000000000000000000000006"), Decimals: 18},
	},
	11155111: {
		{Symbol: "USDC", Name: "USD Coin", Address: common.HexToAddress("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"), Decimals: 6},
		{Symbol: "WETH", Name: "Wrapped Ether", Address: common.HexToAddress("0xfFf9976782d46CC05630D1f6eBAb18b2324d6B14"), Decimals: 18},
	},
}

// NativeAsset is the native coin's entry.
func NativeAsset() Asset { return Asset{Symbol: Native, Name: "Ether", Decimals: 18} }

// FromEnv builds the networks named by RPC_URL_<chainId> variables. Dialing
// an HTTP endpoint opens no connection, so a chain that is down fails the
// requests that need it (503), not the function's start.
func FromEnv(environ []string) (*Networks, error) {
	var ns []*Network
	for _, kv := range environ {
		name, url, ok := strings.Cut(kv, "=")
		rest, isRPC := strings.CutPrefix(name, "RPC_URL_")
		if !ok || !isRPC || url == "" {
			continue
		}
		id, err := strconv.ParseUint(rest, 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("chain: %s: the suffix must be a chain id", name)
		}
		c, err := ethclient.Dial(url)
		if err != nil {
			return nil, fmt.Errorf("chain: %s: %w", name, err)
		}
		ns = append(ns, &Network{ID: id, Client: c, Assets: append([]Asset{NativeAsset()}, knownAssets[id]...)})
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i].ID < ns[j].ID })
	return NewNetworks(ns...)
}

// ErrUnavailable marks a chain call that failed for the chain's reasons
// (unreachable, timed out, answered garbage): the request may be retried.
var ErrUnavailable = errors.New("chain: unavailable")

// NotYet reports whether a receipt lookup failed only because the receipt
// is not there yet: not mined, or the node still indexing transactions
// after a start.
func NotYet(err error) bool {
	return errors.Is(err, ethereum.NotFound) || err != nil && strings.Contains(err.Error(), "indexing is in progress")
}
