package signing

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// Transfer kinds: the known EIP-712 messages that let someone else move the
// signer's tokens.
const (
	KindPermit                    = "permit"                    // EIP-2612
	KindDAIPermit                 = "daiPermit"                 // DAI's pre-2612 permit: allowed means unlimited
	KindTransferWithAuthorization = "transferWithAuthorization" // EIP-3009
	KindReceiveWithAuthorization  = "receiveWithAuthorization"  // EIP-3009
	KindPermit2Allowance          = "permit2Allowance"          // Permit2 PermitSingle, PermitBatch
	KindPermit2Transfer           = "permit2Transfer"           // Permit2 Permit(Batch)(Witness)TransferFrom
)

// Transfer is a token movement a signed message authorises.
type Transfer struct {
	Kind string
	// ChainID is the domain's; nil when it has none.
	ChainID *big.Int
	// Token is whose units move: the domain's verifyingContract, or
	// Permit2's token field.
	Token common.Address
	// Recipient is who may take them: the spender or the payee.
	Recipient common.Address
	// Amount is in base units; 2^256-1 for DAI's unlimited permit.
	Amount *big.Int
}

type field = apitypes.Type

// The type definitions of the known messages, exactly as their contracts
// hash them: a message of another shape has another type hash, which the
// contract would not accept, so matching the definition exactly is
// matching what the contract verifies.
var (
	permitDetails    = []field{{Name: "token", Type: "address"}, {Name: "amount", Type: "uint160"}, {Name: "expiration", Type: "uint48"}, {Name: "nonce", Type: "uint48"}}
	tokenPermissions = []field{{Name: "token", Type: "address"}, {Name: "amount", Type: "uint256"}}
	authorization    = []field{{Name: "from", Type: "address"}, {Name: "to", Type: "address"}, {Name: "value", Type: "uint256"},
		{Name: "validAfter", Type: "uint256"}, {Name: "validBefore", Type: "uint256"}, {Name: "nonce", Type: "bytes32"}}
	transferFrom = func(permitted string) []field {
		return []field{{Name: "permitted", Type: permitted}, {Name: "spender", Type: "address"}, {Name: "nonce", Type: "uint256"}, {Name: "deadline", Type: "uint256"}}
	}
	known = []struct {
		kind, primary string
		fields        []field
		witness       bool // Permit2's witness variants add a last field of any type
		deps          map[string][]field
		read          func(msg map[string]any, verifyingContract common.Address) ([]Transfer, error)
	}{
		{KindPermit, "Permit", []field{{Name: "owner", Type: "address"}, {Name: "spender", Type: "address"}, {Name: "value", Type: "uint256"},
			{Name: "nonce", Type: "uint256"}, {Name: "deadline", Type: "uint256"}}, false, nil, payTo("spender", "value")},
		{KindDAIPermit, "Permit", []field{{Name: "holder", Type: "address"}, {Name: "spender", Type: "address"}, {Name: "nonce", Type: "uint256"},
			{Name: "expiry", Type: "uint256"}, {Name: "allowed", Type: "bool"}}, false, nil, daiPermit},
		{KindTransferWithAuthorization, "TransferWithAuthorization", authorization, false, nil, payTo("to", "value")},
		{KindReceiveWithAuthorization, "ReceiveWithAuthorization", authorization, false, nil, payTo("to", "value")},
		{KindPermit2Allowance, "PermitSingle", []field{{Name: "details", Type: "PermitDetails"}, {Name: "spender", Type: "address"}, {Name: "sigDeadline", Type: "uint256"}},
			false, map[string][]field{"PermitDetails": permitDetails}, permit2("details")},
		{KindPermit2Allowance, "PermitBatch", []field{{Name: "details", Type: "PermitDetails[]"}, {Name: "spender", Type: "address"}, {Name: "sigDeadline", Type: "uint256"}},
			false, map[string][]field{"PermitDetails": permitDetails}, permit2("details")},
		{KindPermit2Transfer, "PermitTransferFrom", transferFrom("TokenPermissions"), false, map[string][]field{"TokenPermissions": tokenPermissions}, permit2("permitted")},
		{KindPermit2Transfer, "PermitBatchTransferFrom", transferFrom("TokenPermissions[]"), false, map[string][]field{"TokenPermissions": tokenPermissions}, permit2("permitted")},
		{KindPermit2Transfer, "PermitWitnessTransferFrom", transferFrom("TokenPermissions"), true, map[string][]field{"TokenPermissions": tokenPermissions}, permit2("permitted")},
		{KindPermit2Transfer, "PermitBatchWitnessTransferFrom", transferFrom("TokenPermissions[]"), true, map[string][]field{"TokenPermissions": tokenPermissions}, permit2("permitted")},
	}
)

// Transfers reads the token movements td authorises when it is one of the
// known transfer-shaped messages (EIP-2612 and DAI permits, EIP-3009
// authorizations, Permit2's allowances and signature transfers); none for
// any other typed data. td must have passed TypedDataDigest, so its values
// are those the digest encodes, read here the way apitypes reads them.
func Transfers(td apitypes.TypedData) ([]Transfer, error) {
	for _, k := range known {
		if td.PrimaryType != k.primary || !shaped(td.Types[k.primary], k.fields, k.witness) {
			continue
		}
		deps := true
		for name, fs := range k.deps {
			deps = deps && shaped(td.Types[name], fs, false)
		}
		if !deps {
			continue
		}
		var vc common.Address
		if s := td.Domain.VerifyingContract; s != "" && common.IsHexAddress(s) {
			vc = common.HexToAddress(s)
		}
		out, err := k.read(td.Message, vc)
		if err != nil {
			return nil, invalidTypedData("%s message: %v", td.PrimaryType, err)
		}
		var chainID *big.Int
		if td.Domain.ChainId != nil {
			chainID = new(big.Int).Set((*big.Int)(td.Domain.ChainId))
		}
		for i := range out {
			out[i].Kind, out[i].ChainID = k.kind, chainID
		}
		return out, nil
	}
	return nil, nil
}

func shaped(have, want []field, witness bool) bool {
	if witness {
		return len(have) == len(want)+1 && slices.Equal(have[:len(want)], want)
	}
	return slices.Equal(have, want)
}

// payTo reads a message whose token is the domain's verifyingContract.
func payTo(recipient, amount string) func(map[string]any, common.Address) ([]Transfer, error) {
	return func(msg map[string]any, vc common.Address) ([]Transfer, error) {
		to, err := address(msg[recipient])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", recipient, err)
		}
		n, err := integer(msg[amount])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", amount, err)
		}
		return []Transfer{{Token: vc, Recipient: to, Amount: n}}, nil
	}
}

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

func daiPermit(msg map[string]any, vc common.Address) ([]Transfer, error) {
	spender, err := address(msg["spender"])
	if err != nil {
		return nil, fmt.Errorf("spender: %w", err)
	}
	allowed, ok := msg["allowed"].(bool)
	if !ok {
		return nil, fmt.Errorf("allowed: not a bool")
	}
	amount := new(big.Int)
	if allowed {
		amount.Set(maxUint256)
	}
	return []Transfer{{Token: vc, Recipient: spender, Amount: amount}}, nil
}

// permit2 reads Permit2's messages: the tokens and amounts are in field
// (one struct or a list of them), the spender beside it.
func permit2(field string) func(map[string]any, common.Address) ([]Transfer, error) {
	return func(msg map[string]any, _ common.Address) ([]Transfer, error) {
		spender, err := address(msg["spender"])
		if err != nil {
			return nil, fmt.Errorf("spender: %w", err)
		}
		items, ok := msg[field].([]any)
		if !ok {
			items = []any{msg[field]}
		}
		out := make([]Transfer, 0, len(items))
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s[%d]: not a struct", field, i)
			}
			token, err := address(m["token"])
			if err != nil {
				return nil, fmt.Errorf("%s[%d].token: %w", field, i, err)
			}
			n, err := integer(m["amount"])
			if err != nil {
				return nil, fmt.Errorf("%s[%d].amount: %w", field, i, err)
			}
			out = append(out, Transfer{Token: token, Recipient: spender, Amount: n})
		}
		return out, nil
	}
}

// address reads an address value as apitypes encodes it.
func address(v any) (common.Address, error) {
	s, ok := v.(string)
	if !ok || !common.IsHexAddress(s) {
		return common.Address{}, fmt.Errorf("not an address")
	}
	return common.HexToAddress(s), nil
}

// integer reads an unsigned integer value as apitypes encodes it: a
// *big.Int (a JSON number, see exactNumbers) or a decimal or 0x string.
func integer(v any) (*big.Int, error) {
	switch t := v.(type) {
	case *big.Int:
		if t.Sign() >= 0 {
			return new(big.Int).Set(t), nil
		}
	case string:
		var n math.HexOrDecimal256
		if err := n.UnmarshalText([]byte(t)); err == nil && (*big.Int)(&n).Sign() >= 0 {
			return (*big.Int)(&n), nil
		}
	}
	return nil, fmt.Errorf("not an unsigned integer")
}
