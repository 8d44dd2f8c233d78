package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"platformapi/shared/groups/webhooks"
)

// receiverVerifies is a receiver written from the documented scheme only
// (not from Verify): split the header, recompute HMAC-SHA256(secret,
// "<t>.<body>") and compare with any v1.
func receiverVerifies(header string, body []byte, secret string) bool {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts + "." + string(body)))
	want := hex.EncodeToString(h.Sum(nil))
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

var signatureHeader = regexp.MustCompile(`^t=\d+(,v1=[0-9a-f]{64})+$`)

func TestSignatureFollowsTheDocumentedScheme(t *testing.T) {
	secret := webhooks.NewSecret()
	body := []byte(`{"id":"evt_1","type":"project.created"}`)
	now := time.Unix(1_700_000_000, 0)
	h := webhooks.Sign(now, body, secret)
	if !signatureHeader.MatchString(h) || !strings.HasPrefix(h, "t="+strconv.FormatInt(now.Unix(), 10)+",") {
		t.Fatalf("header %q", h)
	}
	if !receiverVerifies(h, body, secret) {
		t.Fatal("a receiver following the documentation rejects the signature")
	}
	if err := webhooks.Verify(h, body, secret, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
}

// A secret is whsec_ and the standard base64 of 32 random bytes, which is
// what the Standard Webhooks libraries decode their key from.
func TestSecretsAreUnguessablePrefixedStandardBase64(t *testing.T) {
	a, b := webhooks.NewSecret(), webhooks.NewSecret()
	if a == b || !regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`).MatchString(a) {
		t.Fatalf("secrets %q %q", a, b)
	}
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_")); err != nil || len(key) != 32 {
		t.Fatalf("key of %q: %d bytes, %v", a, len(key), err)
	}
}

// standardReceiverVerifies is a receiver written from the Standard Webhooks
// specification only: the key is the base64 after whsec_, the signed
// content "<id>.<timestamp>.<body>", and any space-separated v1 may match.
func standardReceiverVerifies(id, ts, header string, body []byte, secret string) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id + "." + ts + "." + string(body)))
	want := "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
	for _, sig := range strings.Split(header, " ") {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// The example of the Standard Webhooks specification's reference test
// suite signs to the value its libraries compute.
func TestStandardSignatureMatchesTheSpecificationsExample(t *testing.T) {
	got := webhooks.SignStandard("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("SignStandard = %q, want %q", got, want)
	}
}

// During a rotation webhook-signature holds one v1 per secret, separated by
// a space, and a receiver holding either verifies; another secret does not.
func TestStandardSignatureCarriesBothSecretsDuringARotation(t *testing.T) {
	cur, prev, other := webhooks.NewSecret(), webhooks.NewSecret(), webhooks.NewSecret()
	body := []byte(`{"id":"evt_1"}`)
	now := time.Unix(1_700_000_000, 0)
	h := webhooks.SignStandard("evt_1", now, body, cur, prev)
	if !regexp.MustCompile(`^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$`).MatchString(h) {
		t.Fatalf("header %q", h)
	}
	for _, tc := range []struct {
		name, id, ts, secret string
		body                 []byte
		want                 bool
	}{
		{"Current", "evt_1", "1700000000", cur, body, true},
		{"Previous", "evt_1", "1700000000", prev, body, true},
		{"OtherSecret", "evt_1", "1700000000", other, body, false},
		{"OtherID", "evt_2", "1700000000", cur, body, false},
		{"OtherTimestamp", "evt_1", "1700000001", cur, body, false},
		{"TamperedBody", "evt_1", "1700000000", cur, []byte(`{"id":"evt_2"}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := standardReceiverVerifies(tc.id, tc.ts, h, tc.body, tc.secret); got != tc.want {
				t.Fatalf("verifies = %v, want %v", got, tc.want)
			}
		})
	}
}

// A secret issued before the standard headers (base64url without padding)
// keeps its X-Service-Signature (keyed with the whole string) and signs the
// standard header with the bytes it encodes.
func TestSecretsIssuedBeforeStandardWebhooksStillSign(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	legacy := "whsec_" + base64.RawURLEncoding.EncodeToString(key)
	body := []byte(`{}`)
	now := time.Unix(1_700_000_000, 0)
	if err := webhooks.Verify(webhooks.Sign(now, body, legacy), body, legacy, now); err != nil || !receiverVerifies(webhooks.Sign(now, body, legacy), body, legacy) {
		t.Fatalf("X-Service-Signature with a legacy secret: %v", err)
	}
	if !standardReceiverVerifies("evt_1", "1700000000", webhooks.SignStandard("evt_1", now, body, legacy), body, "whsec_"+base64.StdEncoding.EncodeToString(key)) {
		t.Fatal("the standard signature of a legacy secret is not keyed with the bytes it encodes")
	}
}

func TestVerifyRefusesWhatWasNotSignedNowWithTheSecret(t *testing.T) {
	secret, other := webhooks.NewSecret(), webhooks.NewSecret()
	body := []byte(`{"a":1}`)
	now := time.Unix(1_700_000_000, 0)
	h := webhooks.Sign(now, body, secret)
	for _, tc := range []struct {
		name   string
		header string
		body   []byte
		secret string
		at     time.Time
		want   error
	}{
		{"TamperedBody", h, []byte(`{"a":2}`), secret, now, webhooks.ErrBadSignature},
		{"OtherSecret", h, body, other, now, webhooks.ErrBadSignature},
		{"TimestampSwapped", strings.Replace(h, "t=1700000000", "t=1700000001", 1), body, secret, now, webhooks.ErrBadSignature},
		{"TooOld", h, body, secret, now.Add(webhooks.VerifyTolerance + time.Second), webhooks.ErrStale},
		{"FromTheFuture", h, body, secret, now.Add(-webhooks.VerifyTolerance - time.Second), webhooks.ErrStale},
		{"NoSignature", "t=1700000000", body, secret, now, webhooks.ErrNoSignature},
		{"Empty", "", body, secret, now, webhooks.ErrNoSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := webhooks.Verify(tc.header, tc.body, tc.secret, tc.at); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// During a rotation's grace period each secret alone verifies.
func TestTwoSecretsSignSoEitherVerifies(t *testing.T) {
	cur, prev := webhooks.NewSecret(), webhooks.NewSecret()
	body := []byte(`{}`)
	now := time.Now()
	h := webhooks.Sign(now, body, cur, prev)
	if strings.Count(h, "v1=") != 2 {
		t.Fatalf("header %q", h)
	}
	for _, s := range []string{cur, prev} {
		if err := webhooks.Verify(h, body, s, now); err != nil || !receiverVerifies(h, body, s) {
			t.Fatalf("secret does not verify: %v", err)
		}
	}
}
