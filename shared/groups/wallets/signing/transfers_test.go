package signing

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

const (
	usdcAddr    = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
	wethAddr    = "0xfFf9976782d46CC05630D1f6eBAb18b2324d6B14"
	permit2Addr = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
	spenderAddr = "0x2222222222222222222222222222222222222222"
	max256      = "115792089237316195423570985008687907853269984665640564039457584007913129639935"
)

const domainType = `"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}]`

func typed(types, primary, domainName, verifyingContract, message string) string {
	return fmt.Sprintf(`{"types":{%s,%s},"primaryType":%q,"domain":{"name":%q,"version":"1","chainId":1337,"verifyingContract":%q},"message":%s}`,
		domainType, types, primary, domainName, verifyingContract, message)
}

const (
	permitType  = `"Permit":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"nonce","type":"uint256"},{"name":"deadline","type":"uint256"}]`
	authType    = `[{"name":"from","type":"address"},{"name":"to","type":"address"},{"name":"value","type":"uint256"},{"name":"validAfter","type":"uint256"},{"name":"validBefore","type":"uint256"},{"name":"nonce","type":"bytes32"}]`
	detailsType = `"PermitDetails":[{"name":"token","type":"address"},{"name":"amount","type":"uint160"},{"name":"expiration","type":"uint48"},{"name":"nonce","type":"uint48"}]`
	tokenPerms  = `"TokenPermissions":[{"name":"token","type":"address"},{"name":"amount","type":"uint256"}]`
	nonce32     = `"0x0000000000000000000000000000000000000000000000000000000000000001"`
)

func permitMsg(value string) string {
	return `{"owner":"0x1111111111111111111111111111111111111111","spender":"` + spenderAddr + `","value":` + value + `,"nonce":0,"deadline":"99999999999"}`
}

// The transfer-shaped messages are read exactly as
// their contracts hash them (the amount as apitypes encodes it, decimal,
// hex or a JSON number), and a look-alike of another shape, which the
// contract would not accept, is no transfer.
func TestTransfersReadsTheKnownTransferShapedMessages(t *testing.T) {
	type want struct{ kind, token, amount string }
	for _, c := range []struct {
		name, doc string
		want      []want
	}{
		{"EIP-2612 permit, unlimited", typed(permitType, "Permit", "USD Coin", usdcAddr, permitMsg(`"`+max256+`"`)), []want{{KindPermit, usdcAddr, max256}}},
		{"EIP-2612 permit, JSON number", typed(permitType, "Permit", "USD Coin", usdcAddr, permitMsg(`2500000`)), []want{{KindPermit, usdcAddr, "2500000"}}},
		{"EIP-2612 permit, hex", typed(permitType, "Permit", "USD Coin", usdcAddr, permitMsg(`"0x10"`)), []want{{KindPermit, usdcAddr, "16"}}},
		{"DAI permit", typed(`"Permit":[{"name":"holder","type":"address"},{"name":"spender","type":"address"},{"name":"nonce","type":"uint256"},{"name":"expiry","type":"uint256"},{"name":"allowed","type":"bool"}]`,
			"Permit", "Dai Stablecoin", usdcAddr, `{"holder":"0x1111111111111111111111111111111111111111","spender":"`+spenderAddr+`","nonce":0,"expiry":0,"allowed":true}`),
			[]want{{KindDAIPermit, usdcAddr, max256}}},
		{"EIP-3009 transfer", typed(`"TransferWithAuthorization":`+authType, "TransferWithAuthorization", "USD Coin", usdcAddr,
			`{"from":"0x1111111111111111111111111111111111111111","to":"`+spenderAddr+`","value":"7","validAfter":0,"validBefore":"99999999999","nonce":`+nonce32+`}`),
			[]want{{KindTransferWithAuthorization, usdcAddr, "7"}}},
		{"EIP-3009 receive", typed(`"ReceiveWithAuthorization":`+authType, "ReceiveWithAuthorization", "USD Coin", usdcAddr,
			`{"from":"0x1111111111111111111111111111111111111111","to":"`+spenderAddr+`","value":"8","validAfter":0,"validBefore":"99999999999","nonce":`+nonce32+`}`),
			[]want{{KindReceiveWithAuthorization, usdcAddr, "8"}}},
		{"Permit2 PermitSingle", typed(detailsType+`,"PermitSingle":[{"name":"details","type":"PermitDetails"},{"name":"spender","type":"address"},{"name":"sigDeadline","type":"uint256"}]`,
			"PermitSingle", "Permit2", permit2Addr, `{"details":{"token":"`+usdcAddr+`","amount":"1461501637330902918203684832716283019655932542975","expiration":0,"nonce":0},"spender":"`+spenderAddr+`","sigDeadline":1}`),
			[]want{{KindPermit2Allowance, usdcAddr, "1461501637330902918203684832716283019655932542975"}}},
		{"Permit2 PermitBatch", typed(detailsType+`,"PermitBatch":[{"name":"details","type":"PermitDetails[]"},{"name":"spender","type":"address"},{"name":"sigDeadline","type":"uint256"}]`,
			"PermitBatch", "Permit2", permit2Addr, `{"details":[{"token":"`+usdcAddr+`","amount":"5","expiration":0,"nonce":0},{"token":"`+wethAddr+`","amount":"6","expiration":0,"nonce":0}],"spender":"`+spenderAddr+`","sigDeadline":1}`),
			[]want{{KindPermit2Allowance, usdcAddr, "5"}, {KindPermit2Allowance, wethAddr, "6"}}},
		{"Permit2 PermitTransferFrom", typed(tokenPerms+`,"PermitTransferFrom":[{"name":"permitted","type":"TokenPermissions"},{"name":"spender","type":"address"},{"name":"nonce","type":"uint256"},{"name":"deadline","type":"uint256"}]`,
			"PermitTransferFrom", "Permit2", permit2Addr, `{"permitted":{"token":"`+usdcAddr+`","amount":"9"},"spender":"`+spenderAddr+`","nonce":0,"deadline":1}`),
			[]want{{KindPermit2Transfer, usdcAddr, "9"}}},
		{"Permit2 PermitBatchWitnessTransferFrom", typed(tokenPerms+`,"Order":[{"name":"id","type":"uint256"}],"PermitBatchWitnessTransferFrom":[{"name":"permitted","type":"TokenPermissions[]"},{"name":"spender","type":"address"},{"name":"nonce","type":"uint256"},{"name":"deadline","type":"uint256"},{"name":"witness","type":"Order"}]`,
			"PermitBatchWitnessTransferFrom", "Permit2", permit2Addr, `{"permitted":[{"token":"`+wethAddr+`","amount":"10"}],"spender":"`+spenderAddr+`","nonce":0,"deadline":1,"witness":{"id":1}}`),
			[]want{{KindPermit2Transfer, wethAddr, "10"}}},
		{"a permit of another shape", typed(`"Permit":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"nonce","type":"uint256"}]`,
			"Permit", "USD Coin", usdcAddr, `{"owner":"0x1111111111111111111111111111111111111111","spender":"`+spenderAddr+`","value":"1","nonce":0}`), nil},
		{"PermitSingle with other details", typed(`"PermitDetails":[{"name":"token","type":"address"},{"name":"amount","type":"uint256"},{"name":"expiration","type":"uint48"},{"name":"nonce","type":"uint48"}],"PermitSingle":[{"name":"details","type":"PermitDetails"},{"name":"spender","type":"address"},{"name":"sigDeadline","type":"uint256"}]`,
			"PermitSingle", "Permit2", permit2Addr, `{"details":{"token":"`+usdcAddr+`","amount":"5","expiration":0,"nonce":0},"spender":"`+spenderAddr+`","sigDeadline":1}`), nil},
		{"Mail", mailDoc, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, td, err := TypedDataDigest(json.RawMessage(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Transfers(td)
			if err != nil || len(got) != len(c.want) {
				t.Fatalf("transfers %+v (%v), want %+v", got, err, c.want)
			}
			for i, w := range c.want {
				g := got[i]
				if g.Kind != w.kind || g.Token != common.HexToAddress(w.token) || g.Amount.String() != w.amount ||
					g.Recipient != common.HexToAddress(spenderAddr) || g.ChainID == nil || g.ChainID.Cmp(big.NewInt(1337)) != 0 {
					t.Errorf("transfer %d: %+v, want %+v to %s on 1337", i, g, w, spenderAddr)
				}
			}
		})
	}
}

var mailDoc = strings.Join([]string{`{"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"chainId","type":"uint256"}],`,
	`"Mail":[{"name":"contents","type":"string"}]},"primaryType":"Mail","domain":{"name":"Ether Mail","chainId":1337},"message":{"contents":"Hello"}}`}, "")
