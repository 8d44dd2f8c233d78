package x402

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// The exact EVM scheme writes integers as decimal strings, or hex when they
// start with 0x; leading zeros are allowed. The parsers below accept exactly
// that and nothing else (no signs, underscores or whitespace), so that two
// spellings of one value can only differ in ways that parse to the same number.

// parseUint256 parses a non-negative integer that fits in 256 bits.
func parseUint256(s string) (*big.Int, error) {
	digits, base := s, 10
	if hasHexPrefix(s) {
		digits, base = s[2:], 16
	}
	if digits == "" || len(digits) > 80 || !allDigits(digits, base) {
		return nil, fmt.Errorf("%q is not a uint256", s)
	}
	n, _ := new(big.Int).SetString(digits, base)
	if n.BitLen() > 256 {
		return nil, fmt.Errorf("%q overflows uint256", s)
	}
	return n, nil
}

// parseBytes32 parses a 32-byte value written as an integer (the nonce).
func parseBytes32(s string) ([32]byte, error) {
	var out [32]byte
	n, err := parseUint256(s)
	if err != nil {
		return out, err
	}
	n.FillBytes(out[:])
	return out, nil
}

// parseAddress parses a 0x-prefixed 20-byte hex address. Any letter case is
// accepted: the signature covers the bytes, so a mistyped checksum can only
// fail later checks, never pass them.
func parseAddress(s string) (common.Address, error) {
	if !hasHexPrefix(s) || len(s) != 42 || !allDigits(s[2:], 16) {
		return common.Address{}, fmt.Errorf("%q is not a 0x-prefixed 20-byte address", s)
	}
	return common.HexToAddress(s), nil
}

// parseHexBytes parses 0x-prefixed hex of even length (the signature).
func parseHexBytes(s string) ([]byte, error) {
	if !hasHexPrefix(s) || len(s) == 2 {
		return nil, fmt.Errorf("not 0x-prefixed hex")
	}
	b, err := hex.DecodeString(s[2:])
	if err != nil {
		return nil, fmt.Errorf("not 0x-prefixed hex: %v", err)
	}
	return b, nil
}

// ParseChainID returns the chain id of a CAIP-2 "eip155:<chainId>" network.
// The reference must be canonical decimal (no leading zeros), so that one
// chain has exactly one network string.
func ParseChainID(network string) (uint64, error) {
	ref, ok := strings.CutPrefix(network, "eip155:")
	if !ok || ref == "" || (ref[0] == '0') || !allDigits(ref, 10) {
		return 0, fmt.Errorf("network %q is not eip155:<chainId>", network)
	}
	id, err := strconv.ParseUint(ref, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("network %q: chain id out of range", network)
	}
	return id, nil
}

// USDCFromCents converts an amount in US cents into USDC atomic units (6
// decimals), the form PaymentRequirements.Amount takes.
func USDCFromCents(cents int64) string {
	return new(big.Int).Mul(big.NewInt(cents), big.NewInt(10_000)).String()
}

func hasHexPrefix(s string) bool {
	return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

func allDigits(s string, base int) bool {
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
		default:
			return false
		}
	}
	return true
}
