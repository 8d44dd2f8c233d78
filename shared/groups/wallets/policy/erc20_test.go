package policy

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

func calldata(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeERC20ReadsOnlyExactTransferAndApprove(t *testing.T) {
	const (
		addrWord   = "000000000000000000000000 2222222222222222222222222222222222222222"
		amountWord = "00000000000000000000000000000000000000000000000000000000000f4240" // 1000000
		maxWord    = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	)
	cases := []struct {
		name   string
		data   string
		ok     bool
		method string
		amount string
	}{
		{"transfer", "a9059cbb" + addrWord + amountWord, true, "transfer", "1000000"},
		{"approve", "095ea7b3" + addrWord + amountWord, true, "approve", "1000000"},
		{"approve of 2^256-1", "095ea7b3" + addrWord + maxWord, true, "approve", uint256x},
		{"other selector", "23b872dd" + addrWord + amountWord, false, "", ""},
		{"empty", "", false, "", ""},
		{"selector only", "a9059cbb", false, "", ""},
		{"short amount word", "a9059cbb" + addrWord + amountWord[2:], false, "", ""},
		{"trailing byte", "a9059cbb" + addrWord + amountWord + "00", false, "", ""},
		{"dirty address word", "a9059cbb" + "000000000000000000000001 2222222222222222222222222222222222222222" + amountWord, false, "", ""},
		{"dirty first byte", "a9059cbb" + "800000000000000000000000 2222222222222222222222222222222222222222" + amountWord, false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method, to, amount, ok := DecodeERC20(calldata(t, c.data))
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			if !ok {
				if method != "" || amount != nil || to != (common.Address{}) {
					t.Fatalf("refused calldata still decoded to %s %s %v", method, to.Hex(), amount)
				}
				return
			}
			if method != c.method || to != bob || amount.String() != c.amount {
				t.Fatalf("got %s(%s, %s), want %s(%s, %s)", method, to.Hex(), amount, c.method, bob.Hex(), c.amount)
			}
		})
	}
}
