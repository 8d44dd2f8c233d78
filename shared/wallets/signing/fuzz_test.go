package signing

import (
	"encoding/json"
	"os"
	"testing"
)

// FuzzTypedDataDigest: typed data comes from API callers. Whatever it is,
// reading it never panics, and what it accepts it digests the same way
// twice (the digest the quote shows is the one later signed).
func FuzzTypedDataDigest(f *testing.F) {
	if mail, err := os.ReadFile("testdata/mail.json"); err == nil {
		f.Add(mail)
	}
	f.Add([]byte(`{"types":{"EIP712Domain":[]},"primaryType":"EIP712Domain","domain":{},"message":{}}`))
	f.Add([]byte(`{"types":{"EIP712Domain":[{"name":"name","type":"string"}],"A":[{"name":"n","type":"uint256"}]},"primaryType":"A","domain":{"name":"x"},"message":{"n":9007199254740993}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d1, _, err := TypedDataDigest(json.RawMessage(raw))
		if err != nil {
			return
		}
		d2, _, err := TypedDataDigest(json.RawMessage(raw))
		if err != nil || d1 != d2 {
			t.Fatalf("digest not stable: %s vs %s (%v)", d1, d2, err)
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
