package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// NewSecret returns a signing secret: SecretPrefix and 32 random bytes in
// standard, padded base64, the form the Standard Webhooks libraries decode
// their HMAC key from, so a receiver hands them the secret string as given.
func NewSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("webhooks: crypto/rand failed: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// Sign returns the X-Service-Signature header of one delivery attempt:
//
//	X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=<hex HMAC-SHA256>]
//
// Each v1 is HMAC-SHA256 keyed with a signing secret (the whole string,
// "whsec_" included, as UTF-8) over the signed payload "<t>.<body>": the
// decimal timestamp, a period, and the raw request body bytes exactly as
// sent. During the 24 hours after a rotation there are two v1 entries, one
// per valid secret, newest first; a receiver accepts the delivery if any
// entry matches a secret it holds. Every retry is signed afresh with its
// own t, so receivers should refuse a t too far from their clock (Verify
// allows five minutes) to defeat replays.
func Sign(t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var sb strings.Builder
	sb.WriteString("t=" + ts)
	for _, s := range secrets {
		sb.WriteString(",v1=" + hex.EncodeToString(mac(s, ts, body)))
	}
	return sb.String()
}

func mac(secret, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// SignStandard returns the webhook-signature header of Standard Webhooks
// (https://www.standardwebhooks.com) for one delivery attempt:
//
//	webhook-signature: v1,<base64 HMAC-SHA256>[ v1,<base64 HMAC-SHA256>]
//
// over "<id>.<t>.<body>", where id is the webhook-id header (the event id,
// the same on every retry, so receivers can drop duplicates) and t the
// webhook-timestamp header, in unix seconds. The key is the secret's part
// after "whsec_", base64-decoded, as the specification's libraries derive
// it. During a rotation there is one signature per valid secret, newest
// first, separated by a space. X-Service-Signature (Sign) is sent beside it
// unchanged.
func SignStandard(id string, t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		h := hmac.New(sha256.New, standardKey(s))
		h.Write([]byte(id + "." + ts + "."))
		h.Write(body)
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
	}
	return strings.Join(sigs, " ")
}

// standardKey is the HMAC key of a secret under Standard Webhooks: its
// base64 after the prefix, decoded. Secrets made before the standard
// headers were added are base64url without padding; they decode as such, so
// a receiver that decodes them that way still verifies until the webhook's
// secret is rotated to the standard form.
func standardKey(secret string) []byte {
	s := strings.TrimPrefix(secret, SecretPrefix)
	if k, err := base64.StdEncoding.DecodeString(s); err == nil {
		return k
	}
	k, _ := base64.RawURLEncoding.DecodeString(s)
	return k
}

// VerifyTolerance is how far a signature's timestamp may be from the
// receiver's clock.
const VerifyTolerance = 5 * time.Minute

// Verification errors.
var (
	ErrNoSignature  = errors.New("webhooks: malformed or missing signature header")
	ErrStale        = errors.New("webhooks: signature timestamp outside tolerance")
	ErrBadSignature = errors.New("webhooks: no signature matches")
)

// Verify checks a delivery as a receiver would: header is X-Service-Signature,
// body the raw request body, secret the receiver's signing secret. It is the
// reference implementation of the scheme documented on Sign.
func Verify(header string, body []byte, secret string, now time.Time) error {
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrNoSignature
	}
	if d := now.Sub(time.Unix(unix, 0)); d > VerifyTolerance || d < -VerifyTolerance {
		return ErrStale
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return ErrBadSignature
}
