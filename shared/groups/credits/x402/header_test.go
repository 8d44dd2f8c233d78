package x402

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestHeader_PaymentRoundTrip(t *testing.T) {
	p := signTest(t, newKey(t), testRequirements())
	p.Resource = &ResourceInfo{URL: "http://127.0.0.1:8080/v1/credits/x402/top-up"}
	value := encode(t, p)

	got, err := DecodePaymentPayload(value)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, p)
	}
	unpadded := strings.TrimRight(value, "=")
	if got, err := DecodePaymentPayload(unpadded); err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("unpadded base64: %v", err)
	}
}

func TestHeader_RequiredAndSettleRoundTrip(t *testing.T) {
	pr := PaymentRequired{X402Version: Version, Error: "payment required",
		Resource: ResourceInfo{URL: "http://x/v1/credits/x402/top-up"}, Accepts: []PaymentRequirements{testRequirements()}}
	if got, err := DecodePaymentRequired(encode(t, pr)); err != nil || !reflect.DeepEqual(got, pr) {
		t.Fatalf("PaymentRequired: %+v, %v", got, err)
	}
	sr := SettleResponse{Success: true, Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66", Transaction: "local:0x01", Network: "eip155:84532"}
	if got, err := DecodeSettleResponse(encode(t, sr)); err != nil || got != sr {
		t.Fatalf("SettleResponse: %+v, %v", got, err)
	}
	if _, err := DecodePaymentRequired(encode(t, PaymentRequired{X402Version: Version})); !errors.Is(err, ErrMalformedHeader) {
		t.Fatalf("PaymentRequired without accepts: %v", err)
	}
}

// Every way a header can be ill-formed is a malformed header (400), never a
// payment decision.
func TestHeader_MalformedPaymentRejected(t *testing.T) {
	valid := signTest(t, newKey(t), testRequirements())
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	edited := func(edit func(m map[string]any)) string {
		raw, _ := json.Marshal(valid)
		var m map[string]any
		json.Unmarshal(raw, &m)
		edit(m)
		raw, _ = json.Marshal(m)
		return base64.StdEncoding.EncodeToString(raw)
	}
	auth := func(field string, v any) string {
		return edited(func(m map[string]any) {
			m["payload"].(map[string]any)["authorization"].(map[string]any)[field] = v
		})
	}
	good := encode(t, valid)

	tests := map[string]string{
		"empty":                   "",
		"too long":                strings.Repeat("A", MaxHeaderLen+4),
		"not base64":              "%%%%",
		"url-safe alphabet":       strings.NewReplacer("+", "-", "/", "_").Replace(good) + "-_",
		"embedded newline":        good[:8] + "\n" + good[8:],
		"not JSON":                b64("hello"),
		"JSON array":              b64(`[1,2]`),
		"JSON null":               b64(`null`),
		"trailing data":           b64(`{"x402Version":2} {}`),
		"unsupported version":     edited(func(m map[string]any) { m["x402Version"] = 3 }),
		"version as string":       edited(func(m map[string]any) { m["x402Version"] = "2" }),
		"accepted missing":        edited(func(m map[string]any) { delete(m, "accepted") }),
		"accepted amount missing": edited(func(m map[string]any) { delete(m["accepted"].(map[string]any), "amount") }),
		"payload missing":         edited(func(m map[string]any) { delete(m, "payload") }),
		"signature not hex":       edited(func(m map[string]any) { m["payload"].(map[string]any)["signature"] = "0xzz" }),
		"signature without 0x":    edited(func(m map[string]any) { m["payload"].(map[string]any)["signature"] = "abcd" }),
		"from not an address":     auth("from", "0x1234"),
		"to missing":              auth("to", ""),
		"value negative":          auth("value", "-1"),
		"value with plus sign":    auth("value", "+5000000"),
		"value overflows uint256": auth("value", "0x1"+strings.Repeat("0", 64)),
		"value as JSON number":    auth("value", 5000000),
		"validBefore decimal dot": auth("validBefore", "1.5"),
		"nonce over 32 bytes":     auth("nonce", "0x01"+strings.Repeat("00", 32)),
		"resource of wrong type":  edited(func(m map[string]any) { m["resource"] = "http://x" }),
		"v1 without scheme":       b64(`{"x402Version":1,"network":"base","payload":{}}`),
		"v1 with empty payload":   b64(`{"x402Version":1,"scheme":"exact","network":"base","payload":{}}`),
		"accepted scheme empty":   edited(func(m map[string]any) { m["accepted"].(map[string]any)["scheme"] = "" }),
	}
	for name, value := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodePaymentPayload(value); !errors.Is(err, ErrMalformedHeader) {
				t.Fatalf("err %v, want ErrMalformedHeader", err)
			}
		})
	}
}

func TestHeader_LegacyV1PayloadAccepted(t *testing.T) {
	req := testRequirements()
	signed := signTest(t, newKey(t), req)
	v1 := map[string]any{"x402Version": 1, "scheme": "exact", "network": "base-sepolia", "payload": signed.Payload}

	p, err := DecodePaymentPayload(encode(t, v1))
	if err != nil {
		t.Fatal(err)
	}
	if p.X402Version != 1 || p.Accepted.Network != "eip155:84532" || p.Payload != signed.Payload {
		t.Fatalf("decoded v1 as %+v", p)
	}
	if up := p.Upgrade(req); up.X402Version != Version || up.Accepted != req || up.Payload != signed.Payload {
		t.Fatalf("upgraded v1 as %+v", up)
	}
	p.Accepted.Network = "base"
	if up := p.Upgrade(req); up.Accepted.Network != "base" {
		t.Fatalf("upgrade must keep the client's network, got %q", up.Accepted.Network)
	}
	if up := signed.Upgrade(PaymentRequirements{}); up != signed {
		t.Fatal("upgrade changed a v2 payload")
	}
}

// A payload of a scheme we do not support is not malformed: the facilitator
// rejects it as a payment (402) with a reason.
func TestHeader_OtherSchemeLeftToFacilitator(t *testing.T) {
	p := PaymentPayload{X402Version: Version, Accepted: PaymentRequirements{Scheme: "upto", Network: "eip155:84532", Amount: "1", Asset: "0x1", PayTo: "0x2"}}
	if _, err := DecodePaymentPayload(encode(t, p)); err != nil {
		t.Fatal(err)
	}
}

func TestHeader_PaymentFromHeaders(t *testing.T) {
	p := signTest(t, newKey(t), testRequirements())
	value, other := encode(t, p), encode(t, signTest(t, newKey(t), testRequirements()))

	tests := []struct {
		name      string
		h         http.Header
		ok        bool
		malformed bool
	}{
		{"none", http.Header{}, false, false},
		{"payment-signature", http.Header{"Payment-Signature": {value}}, true, false},
		{"legacy x-payment", http.Header{"X-Payment": {value}}, true, false},
		{"both equal", http.Header{"Payment-Signature": {value}, "X-Payment": {value}}, true, false},
		{"matching version hint", http.Header{"Payment-Signature": {value}, "X402-Version": {"2"}}, true, false},
		{"both differ", http.Header{"Payment-Signature": {value}, "X-Payment": {other}}, true, true},
		{"repeated", http.Header{"Payment-Signature": {value, value}}, true, true},
		{"version hint mismatch", http.Header{"Payment-Signature": {value}, "X402-Version": {"1"}}, true, true},
		{"undecodable", http.Header{"Payment-Signature": {"!"}}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := PaymentFromHeaders(tc.h)
			if ok != tc.ok || errors.Is(err, ErrMalformedHeader) != tc.malformed || (!tc.malformed && err != nil) {
				t.Fatalf("ok %v err %v", ok, err)
			}
			if ok && !tc.malformed && !reflect.DeepEqual(got, p) {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

// The strict JSON rule (package strictjson) applied to payments: a header
// whose JSON repeats a key (in any letter case) is malformed, so no two
// readers can take different payments from it.
func TestHeader_AmbiguousKeysAreMalformed(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, doc := range []string{`{"x402Version":2,"x402Version":1}`, `{"x402Version":2,"X402Version":1}`, `{"x402Version":2,"accepted":{"payTo":"0xa","PayTo":"0xb"}}`} {
		if _, err := DecodePaymentPayload(b64(doc)); !errors.Is(err, ErrMalformedHeader) || !strings.Contains(err.Error(), "key") {
			t.Errorf("%s: %v, want a malformed header naming the key", doc, err)
		}
	}
}
