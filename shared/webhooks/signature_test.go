package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"platformapi/shared/webhooks"
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

func TestSecretsAreUnguessableAndPrefixed(t *testing.T) {
	a, b := webhooks.NewSecret(), webhooks.NewSecret()
	if a == b || !regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`).MatchString(a) {
		t.Fatalf("secrets %q %q", a, b)
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
