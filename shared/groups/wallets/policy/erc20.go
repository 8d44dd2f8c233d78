package policy

import (
	"bytes"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// ERC-20 methods whose first argument moves value to someone other than the
// token contract, so recipient criteria must see through them.
var (
	selectorTransfer = []byte{0xa9, 0x05, 0x9c, 0xbb} // transfer(address,uint256)
	selectorApprove  = []byte{0x09, 0x5e, 0xa7, 0xb3} // approve(address,uint256)
)

// DecodeERC20 reads transfer(address,uint256) and approve(address,uint256)
// calldata, returning "transfer" or "approve", the recipient (or spender) and
// the amount. Anything else, including calldata of any other length or an
// address word with non-zero upper bytes, is not ok: an ambiguous encoding
// must not let a transfer pass as going somewhere it does not.
func DecodeERC20(data []byte) (method string, to common.Address, amount *big.Int, ok bool) {
	if len(data) != 4+2*32 {
		return "", common.Address{}, nil, false
	}
	switch {
	case bytes.Equal(data[:4], selectorTransfer):
		method = "transfer"
	case bytes.Equal(data[:4], selectorApprove):
		method = "approve"
	default:
		return "", common.Address{}, nil, false
	}
	word := data[4:36]
	for _, b := range word[:12] {
		if b != 0 {
			return "", common.Address{}, nil, false
		}
	}
	return method, common.BytesToAddress(word[12:]), new(big.Int).SetBytes(data[36:68]), true
}
