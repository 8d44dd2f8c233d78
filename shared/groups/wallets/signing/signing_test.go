package signing

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"platformapi/shared/base/apierr"
)

// The EIP-712 specification's example: Cow mails Bob under the "Ether Mail"
// domain; Cow's key is keccak256("cow").
var (
	mailDigest = common.HexToHash("0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2")
	mailR      = common.FromHex("0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d")
	mailS      = common.FromHex("0x07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b91562")
	cowAddress = common.HexToAddress("0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826")
)

func mailJSON(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/mail.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func cowKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("cow")))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mailSignature(v byte) []byte {
	return append(append(append([]byte{}, mailR...), mailS...), v)
}

func requireField(t *testing.T, err error, location, message string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.ValidationFailed {
		t.Fatalf("got %v, want validation_failed", err)
	}
	for _, f := range ae.Errors {
		if f.Location == location && strings.Contains(f.Message, message) {
			return
		}
	}
	t.Fatalf("field errors %+v lack %s: ...%s...", ae.Errors, location, message)
}

func TestTypedDataDigestMatchesTheEIP712MailVector(t *testing.T) {
	digest, td, err := TypedDataDigest(json.RawMessage(mailJSON(t)))
	if err != nil {
		t.Fatal(err)
	}
	if digest != mailDigest {
		t.Fatalf("digest %s, want %s", digest.Hex(), mailDigest.Hex())
	}
	if td.PrimaryType != "Mail" || td.Domain.Name != "Ether Mail" {
		t.Fatalf("parsed %q in domain %q", td.PrimaryType, td.Domain.Name)
	}
}

func TestSignReproducesTheEIP712MailSignature(t *testing.T) {
	key := cowKey(t)
	if crypto.PubkeyToAddress(key.PublicKey) != cowAddress {
		t.Fatal("keccak256(\"cow\") is not Cow's key")
	}
	sig, err := Sign(key, mailDigest)
	if err != nil {
		t.Fatal(err)
	}
	if want := mailSignature(28); !bytes.Equal(sig, want) {
		t.Fatalf("signature %x, want the EIP's %x", sig, want)
	}
	addr, err := Recover(mailDigest, sig)
	if err != nil || addr != cowAddress {
		t.Fatalf("recovered %s, %v; want %s", addr.Hex(), err, cowAddress.Hex())
	}
}

func TestPersonalDigestIsEIP191(t *testing.T) {
	if got, want := PersonalDigest([]byte("hello")), common.HexToHash("0x50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750"); got != want {
		t.Fatalf("digest %s, want %s", got.Hex(), want.Hex())
	}
	for _, m := range []string{"", "hello", "héllo wörld ✓", strings.Repeat("x", 1000), "\x00\xff"} {
		if got := PersonalDigest([]byte(m)); !bytes.Equal(got[:], accounts.TextHash([]byte(m))) {
			t.Errorf("%q: digest differs from accounts.TextHash", m)
		}
	}
}

func TestPersonalSignRecoversToTheSigner(t *testing.T) {
	key, err := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	if err != nil {
		t.Fatal(err)
	}
	digest := PersonalDigest([]byte("hello"))
	sig, err := Sign(key, digest)
	if err != nil {
		t.Fatal(err)
	}
	if len(sig) != 65 || (sig[64] != 27 && sig[64] != 28) {
		t.Fatalf("signature %x: want 65 bytes ending in v 27 or 28", sig)
	}
	addr, err := Recover(digest, sig)
	if err != nil || addr != crypto.PubkeyToAddress(key.PublicKey) {
		t.Fatalf("recovered %s, %v", addr.Hex(), err)
	}
	if other, _ := Recover(PersonalDigest([]byte("hellp")), sig); other == addr {
		t.Fatal("the signature recovers to the signer over another message too")
	}
}

func TestRecoverAcceptsV27Or28AndZeroOrOne(t *testing.T) {
	highS := new(big.Int).Sub(crypto.S256().Params().N, new(big.Int).SetBytes(mailS))
	cases := []struct {
		name string
		sig  []byte
		want common.Address
		err  bool
	}{
		{"v 28", mailSignature(28), cowAddress, false},
		{"v 1", mailSignature(1), cowAddress, false},
		{"v 29", mailSignature(29), common.Address{}, true},
		{"v 2", mailSignature(2), common.Address{}, true},
		{"64 bytes", mailSignature(28)[:64], common.Address{}, true},
		{"66 bytes", append(mailSignature(28), 0), common.Address{}, true},
		{"zero r", append(make([]byte, 32), mailSignature(28)[32:]...), common.Address{}, true},
		{"high s", append(append(append([]byte{}, mailR...), common.LeftPadBytes(highS.Bytes(), 32)...), 27), common.Address{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Recover(mailDigest, c.sig)
			if c.err {
				if !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("got %s, %v; want ErrInvalidSignature", got.Hex(), err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %s, %v; want %s", got.Hex(), err, c.want.Hex())
			}
		})
	}
	if got, err := Recover(mailDigest, mailSignature(27)); err == nil && got == cowAddress {
		t.Fatal("the wrong recovery id recovered the signer")
	}
}

func TestDecodeMessage(t *testing.T) {
	big := strings.Repeat("a", MaxPayloadBytes)
	cases := []struct {
		name, message, encoding string
		want                    []byte
		location, problem       string
	}{
		{"utf8 by default", "héllo", "", []byte("héllo"), "", ""},
		{"utf8", "hello", EncodingUTF8, []byte("hello"), "", ""},
		{"hex", "0x68656c6c6f", EncodingHex, []byte("hello"), "", ""},
		{"hex upper digits", "0xDEADbeef", EncodingHex, []byte{0xde, 0xad, 0xbe, 0xef}, "", ""},
		{"exactly 64 KiB", big, EncodingUTF8, []byte(big), "", ""},
		{"64 KiB of hex", "0x" + strings.Repeat("ab", MaxPayloadBytes), EncodingHex, bytes.Repeat([]byte{0xab}, MaxPayloadBytes), "", ""},
		{"over 64 KiB", big + "a", EncodingUTF8, nil, "body.message", "at most 65536 bytes"},
		{"over 64 KiB of hex", "0x" + strings.Repeat("ab", MaxPayloadBytes+1), EncodingHex, nil, "body.message", "at most 65536 bytes"},
		{"hex without 0x", "68656c6c6f", EncodingHex, nil, "body.message", "0x followed by"},
		{"hex odd length", "0x686", EncodingHex, nil, "body.message", "0x followed by"},
		{"hex not hex", "0xzz", EncodingHex, nil, "body.message", "0x followed by"},
		{"empty", "", EncodingUTF8, nil, "body.message", "non-empty"},
		{"empty hex", "0x", EncodingHex, nil, "body.message", "non-empty"},
		{"invalid UTF-8", "\xff\xfe", EncodingUTF8, nil, "body.message", "UTF-8"},
		{"unknown encoding", "hello", "base64", nil, "body.encoding", "utf8 or hex"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeMessage(c.message, c.encoding)
			if c.location != "" {
				requireField(t, err, c.location, c.problem)
				return
			}
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

func TestTypedDataDigestRefusesMalformedDocuments(t *testing.T) {
	mail := mailJSON(t)
	replace := func(old, new string) string {
		if !strings.Contains(mail, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(mail, old, new, 1)
	}
	without := func(key string) string {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(mail), &doc); err != nil {
			t.Fatal(err)
		}
		delete(doc, key)
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const domain = `"domain": {
    "name": "Ether Mail",
    "version": "1",
    "chainId": 1,
    "verifyingContract": "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"
  },`
	cases := []struct{ name, doc, problem string }{
		{"not an object", `["Mail"]`, "must be an object"},
		{"null", `null`, "must be an object"},
		{"not JSON", `{"types":`, "unexpected end"},
		{"missing domain", without("domain"), "domain is required"},
		{"null domain", replace(domain, `"domain": null,`), "domain is required"},
		{"empty domain", replace(domain, `"domain": {},`), "at least one of"},
		{"missing primaryType", without("primaryType"), "primaryType is required"},
		{"empty primaryType", replace(`"primaryType": "Mail"`, `"primaryType": ""`), "primaryType is required"},
		{"undefined primaryType", replace(`"primaryType": "Mail"`, `"primaryType": "Letter"`), `"Letter" is not defined`},
		{"missing EIP712Domain type", replace(`"EIP712Domain"`, `"Domain"`), "types.EIP712Domain is required"},
		{"missing message", without("message"), "message is required"},
		{"missing types", without("types"), "types is required"},
		{"unknown field", replace(`"primaryType": "Mail",`, `"primaryType": "Mail", "salt2": 1,`), "unknown field"},
		{"unknown domain field", replace(`"version": "1",`, `"version": "1", "author": "x",`), "unknown field"},
		{"duplicate key", replace(`"contents": "Hello, Bob!"`, `"contents": "Hello, Bob!", "contents": "Send me all"`), "duplicate key"},
		{"case-variant key", replace(`"primaryType": "Mail",`, `"primaryType": "Mail", "PrimaryType": "Person",`), "differs only in case"},
		{"extra message field", replace(`"contents": "Hello, Bob!"`, `"contents": "Hello, Bob!", "cc": "Alice"`), "extra data"},
		{"wrong value type", replace(`"contents": "Hello, Bob!"`, `"contents": 5`), "doesn't match type 'string'"},
		{"bad address", replace(`"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"`, `"0xbB"`), "doesn't match type 'address'"},
		{"domain field not in types", replace(`{"name": "version", "type": "string"},`, ""), "extra data"},
		{"over 64 KiB", replace(`"Hello, Bob!"`, `"`+strings.Repeat("a", MaxPayloadBytes)+`"`), "at most 65536 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := TypedDataDigest(json.RawMessage(c.doc))
			requireField(t, err, "body.typedData", c.problem)
		})
	}
}

// A uint256 sent as a JSON number beyond 2^53 must be signed as exactly
// that integer, as if it had been sent as a decimal string; fractions and
// exponents are refused rather than rounded.
func TestTypedDataKeepsLargeNumbersExact(t *testing.T) {
	doc := func(value string) json.RawMessage {
		return json.RawMessage(`{"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"}],` +
			`"Pay":[{"name":"amount","type":"uint256"}]},"primaryType":"Pay","domain":{"chainId":1},` +
			`"message":{"amount":` + value + `}}`)
	}
	asNumber, _, err := TypedDataDigest(doc("9007199254740993"))
	if err != nil {
		t.Fatal(err)
	}
	asString, _, err := TypedDataDigest(doc(`"9007199254740993"`))
	if err != nil {
		t.Fatal(err)
	}
	rounded, _, err := TypedDataDigest(doc(`"9007199254740992"`))
	if err != nil {
		t.Fatal(err)
	}
	if asNumber != asString || asNumber == rounded {
		t.Fatal("a large JSON number was not signed as the exact integer")
	}
	for _, v := range []string{"1.5", "1e3", "115792089237316195423570985008687907853269984665640564039457584007913129639936"} {
		if _, _, err := TypedDataDigest(doc(v)); err == nil {
			t.Errorf("%s accepted", v)
		}
	}
}

// A signature signs only what its primary type reaches: a type nothing
// reaches leaves the digest unchanged and would only pad what an approver
// reads, so it is refused; a type reached through an array, a nested type
// or a name that ends in digits counts as reached.
func TestTypesThePrimaryTypeDoesNotReachAreRefused(t *testing.T) {
	mail := mailJSON(t)
	person := `"Person": [`
	if !strings.Contains(mail, person) {
		t.Fatalf("fixture lacks %q", person)
	}
	_, _, err := TypedDataDigest(json.RawMessage(strings.Replace(mail, person, `"Pad": [{"name": "p", "type": "string"}], `+person, 1)))
	requireField(t, err, "body.typedData.types", "Pad")
	for _, c := range []struct {
		name  string
		types map[string][]map[string]string
		want  []string
	}{
		{"through arrays and nesting", map[string][]map[string]string{
			"EIP712Domain": {{"name": "name", "type": "string"}},
			"Order":        {{"name": "legs", "type": "Leg[2][]"}},
			"Leg":          {{"name": "asset", "type": "Asset2"}},
			"Asset2":       {{"name": "id", "type": "uint256"}},
		}, nil},
		{"beside the primary type", map[string][]map[string]string{
			"EIP712Domain": {{"name": "name", "type": "string"}},
			"Order":        {{"name": "id", "type": "uint256"}},
			"Asset":        {{"name": "id", "type": "uint256"}},
			"Leg":          {{"name": "asset", "type": "Asset"}},
		}, []string{"Asset", "Leg"}},
	} {
		types := apitypes.Types{}
		for name, fields := range c.types {
			for _, f := range fields {
				types[name] = append(types[name], apitypes.Type{Name: f["name"], Type: f["type"]})
			}
		}
		if got := unreachableTypes(types, "Order"); !slices.Equal(got, c.want) {
			t.Errorf("%s: unreachable %v; want %v", c.name, got, c.want)
		}
	}
}
