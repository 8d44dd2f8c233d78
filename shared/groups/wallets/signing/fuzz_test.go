package signing

import (
	"encoding/json"
	"os"
	"testing"
)

// FuzzTypedDataDigest: typed data comes from API callers. Whatever it is,
// reading it never panics, what it accepts it digests the same way twice
// (the digest the quote shows is the one later signed), and reading the
// transfers of an accepted document never panics and gives each an amount.
func FuzzTypedDataDigest(f *testing.F) {
	if mail, err := os.ReadFile("testdata/mail.json"); err == nil {
		f.Add(mail)
	}
	f.Add([]byte(`{"types":{"EIP712Domain":[]},"primaryType":"EIP712Domain","domain":{},"message":{}}`))
	f.Add([]byte(`{"types":{"EIP712Domain":[{"name":"name","type":"string"}],"A":[{"name":"n","type":"uint256"}]},"primaryType":"A","domain":{"name":"x"},"message":{"n":9007199254740993}}`))
	f.Add([]byte(`{"types":{"EIP712Domain":[{"name":"verifyingContract","type":"address"}],"Permit":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"nonce","type":"uint256"},{"name":"deadline","type":"uint256"}]},"primaryType":"Permit","domain":{"verifyingContract":"0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"},"message":{"owner":"0x1111111111111111111111111111111111111111","spender":"0x2222222222222222222222222222222222222222","value":"0x10","nonce":0,"deadline":1}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d1, td, err := TypedDataDigest(json.RawMessage(raw))
		if err != nil {
			return
		}
		d2, _, err := TypedDataDigest(json.RawMessage(raw))
		if err != nil || d1 != d2 {
			t.Fatalf("digest not stable: %s vs %s (%v)", d1, d2, err)
		}
		transfers, err := Transfers(td)
		for _, tr := range transfers {
			if err == nil && (tr.Amount == nil || tr.Amount.Sign() < 0) {
				t.Fatalf("transfer %+v without an amount", tr)
			}
		}
	})
}

// FuzzDecodeMessage: a personal_sign message and its encoding come from
// callers; decoding never panics and never returns more than the bound.
func FuzzDecodeMessage(f *testing.F) {
	f.Add("hello", "")
	f.Add("0x68656c6c6f", "hex")
	f.Add("0x", "hex")
	f.Fuzz(func(t *testing.T, message, encoding string) {
		b, err := DecodeMessage(message, encoding)
		if err == nil && (len(b) == 0 || len(b) > MaxPayloadBytes) {
			t.Fatalf("accepted %d bytes", len(b))
		}
	})
}
