package chain

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// The ERC-20 methods the API calls on any token.
var erc20ABI = MustABI(`[{"type":"function","name":"transfer","inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[{"type":"bool"}]},
{"type":"function","name":"approve","inputs":[{"name":"spender","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[{"type":"bool"}]},
{"type":"function","name":"balanceOf","inputs":[{"name":"who","type":"address"}],"outputs":[{"type":"uint256"}]},
{"type":"function","name":"allowance","inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"}],"outputs":[{"type":"uint256"}]}]`)

// MustABI parses an ABI the code itself holds (a failure is a programming
// error).
func MustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(err)
	}
	return a
}

// ERC20Call is calldata of an ERC-20 method (transfer, approve, balanceOf,
// allowance).
func ERC20Call(method string, args ...any) []byte {
	b, err := erc20ABI.Pack(method, args...)
	if err != nil {
		panic(err) // a programming error: the methods and types are ours
	}
	return b
}

// Uint256 reads one uint256 a contract returns for data, at block (nil:
// the latest).
func Uint256(ctx context.Context, c Client, to common.Address, data []byte, block *big.Int) (*big.Int, error) {
	out, err := c.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, block)
	if err != nil {
		return nil, err
	}
	if len(out) != 32 {
		return nil, fmt.Errorf("chain: %s answered %d bytes, not a uint256", to, len(out))
	}
	return new(big.Int).SetBytes(out), nil
}

// BalanceOf is owner's balance of token at block: the native coin's for the
// zero address, the ERC-20 balanceOf otherwise.
func BalanceOf(ctx context.Context, c Client, token, owner common.Address, block *big.Int) (*big.Int, error) {
	if token == (common.Address{}) {
		return c.BalanceAt(ctx, owner, block)
	}
	return Uint256(ctx, c, token, ERC20Call("balanceOf", owner), block)
}

// Fees are the tip and fee cap a transaction is signed with now: the
// node's suggested tip, and twice the latest base fee plus the tip, so the
// transaction stays includable while the base fee doubles.
func Fees(ctx context.Context, c Client) (tip, feeCap *big.Int, err error) {
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	if tip, err = c.SuggestGasTipCap(ctx); err != nil {
		return nil, nil, err
	}
	base := head.BaseFee
	if base == nil {
		base = new(big.Int)
	}
	return tip, new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip), nil
}
