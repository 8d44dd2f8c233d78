package httpapi_test

import (
	"crypto/ecdsa"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/x402"
)

func payer(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// challenge asks for a top-up without paying and returns the requirements.
func (e *env) challenge(key, idemKey string, usd float64) x402.PaymentRequirements {
	e.t.Helper()
	r := e.must(e.do(req{method: "POST", path: "/v1/credits/x402/top-up", key: key, idem: idemKey, body: map[string]any{"amountUsd": usd}}), 402, "payment_required")
	pr, err := x402.DecodePaymentRequired(r.header.Get("Payment-Required"))
	if err != nil {
		e.t.Fatalf("Payment-Required: %v", err)
	}
	if pr.X402Version != 2 || len(pr.Accepts) != 1 {
		e.t.Fatalf("challenge = %+v", pr)
	}
	return pr.Accepts[0]
}

func (e *env) pay(key, idemKey string, usd float64, p x402.PaymentPayload) *resp {
	e.t.Helper()
	hdr, err := x402.EncodeHeader(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do(req{method: "POST", path: "/v1/credits/x402/top-up", key: key, idem: idemKey, body: map[string]any{"amountUsd": usd},
		headers: map[string]string{"Payment-Signature": hdr}})
}

func (e *env) balance(key string) float64 {
	e.t.Helper()
	return e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: key}), 200).body["balance"].(float64)
}

func sign(t *testing.T, e *env, k *ecdsa.PrivateKey, req x402.PaymentRequirements, opts x402.SignOptions) x402.PaymentPayload {
	t.Helper()
	if opts.Now.IsZero() {
		opts.Now = e.clock.Now()
	}
	p, err := x402.Sign(k, req, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTopUpChallengesThenCreditsExactlyOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		ik := idem()
		requirements := e.challenge(root, ik, 12.34)
		if requirements.Amount != "12340000" || requirements.PayTo != topUpConfig.PayTo || requirements.Asset != topUpConfig.Asset ||
			requirements.Network != "eip155:84532" || requirements.Scheme != "exact" || requirements.Extra.Name != "USDC" {
			t.Fatalf("requirements = %+v", requirements)
		}
		// The challenge was not stored: the paid retry with the same key runs.
		r := e.must(e.pay(root, ik, 12.34, sign(t, e, payer(t), requirements, x402.SignOptions{})), 200)
		if r.body["creditedUsd"].(float64) != 12.34 || r.body["creditedCredits"].(float64) != 1234 || r.body["balance"].(float64) != 1235 {
			t.Fatalf("top-up = %s", r.raw)
		}
		settle, err := x402.DecodeSettleResponse(r.header.Get("Payment-Response"))
		if err != nil || !settle.Success || settle.Network != "eip155:84532" {
			t.Fatalf("Payment-Response = %+v, %v", settle, err)
		}
		if r.header.Get("X-Service-Paid-Agent-Receipt") != r.str("receiptId") || !strings.HasPrefix(r.str("receiptId"), "rcpt_") {
			t.Fatalf("receipt header %q, body %q", r.header.Get("X-Service-Paid-Agent-Receipt"), r.str("receiptId"))
		}
		// A replay returns the stored 200 and credits nothing more.
		again := e.do(req{method: "POST", path: "/v1/credits/x402/top-up", key: root, idem: ik, body: map[string]any{"amountUsd": 12.34}})
		e.must(again, 200)
		if again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("Payment-Response") == "" {
			t.Fatalf("replay headers %v", again.header)
		}
		if got := e.balance(root); got != 1235 {
			t.Fatalf("balance after replay = %v", got)
		}
	})
}

func TestOnePaymentAuthorizationCreditsAtMostOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		requirements := e.challenge(root, idem(), 5)
		p := sign(t, e, payer(t), requirements, x402.SignOptions{})
		e.must(e.pay(root, idem(), 5, p), 200)
		// The same payment under a new idempotency key.
		e.must(e.pay(root, idem(), 5, p), 402, "payment_required")
		// Concurrent retries of another payment under different keys.
		p2 := sign(t, e, payer(t), requirements, x402.SignOptions{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.pay(root, idem(), 5, p2)
				if r.status == 200 {
					mu.Lock()
					ok++
					mu.Unlock()
				} else if r.status != 402 {
					t.Errorf("concurrent retry: %d %s", r.status, r.raw)
				}
			}()
		}
		wg.Wait()
		if ok != 1 {
			t.Fatalf("one authorization credited %d times", ok)
		}
		if got := e.balance(root); got != 1001 {
			t.Fatalf("balance = %v, want 1 + 500 + 500", got)
		}
	})
}

func TestRejectedPaymentsCreditNothing(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	requirements := e.challenge(root, idem(), 10)
	key := payer(t)
	now := e.clock.Now()
	wrong := func(change func(*x402.PaymentRequirements)) x402.PaymentRequirements {
		r := requirements
		change(&r)
		return r
	}
	for name, p := range map[string]x402.PaymentPayload{
		"wrong amount":  sign(t, e, key, wrong(func(r *x402.PaymentRequirements) { r.Amount = "9990000" }), x402.SignOptions{}),
		"wrong payTo":   sign(t, e, key, wrong(func(r *x402.PaymentRequirements) { r.PayTo = "0x1111111111111111111111111111111111111111" }), x402.SignOptions{}),
		"wrong asset":   sign(t, e, key, wrong(func(r *x402.PaymentRequirements) { r.Asset = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" }), x402.SignOptions{}),
		"wrong network": sign(t, e, key, wrong(func(r *x402.PaymentRequirements) { r.Network = "eip155:8453" }), x402.SignOptions{}),
		"expired":       sign(t, e, key, requirements, x402.SignOptions{ValidAfter: now.Add(-time.Hour), ValidBefore: now.Add(-time.Minute)}),
		"not yet valid": sign(t, e, key, requirements, x402.SignOptions{ValidAfter: now.Add(time.Hour), ValidBefore: now.Add(2 * time.Hour)}),
		"bad signature": func() x402.PaymentPayload {
			p := sign(t, e, key, requirements, x402.SignOptions{})
			p.Payload.Authorization.From = "0x2222222222222222222222222222222222222222"
			return p
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			r := e.must(e.pay(root, idem(), 10, p), 402, "payment_required")
			if r.header.Get("Payment-Required") == "" {
				t.Fatal("a rejected payment must carry a fresh challenge")
			}
		})
	}
	malformed := e.do(req{method: "POST", path: "/v1/credits/x402/top-up", key: root, idem: idem(), body: map[string]any{"amountUsd": 10},
		headers: map[string]string{"Payment-Signature": "!!!not base64"}})
	e.must(malformed, 400, "validation_failed")
	if got := e.balance(root); got != 1 {
		t.Fatalf("balance = %v after rejected payments", got)
	}
}

func TestTopUpBodyIsOnlyAnAmountOf5To500WithTwoDecimals(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	for _, body := range []map[string]any{
		{"amountUsd": 4.99}, {"amountUsd": 500.01}, {"amountUsd": 5.001}, {"amountUsd": "10"}, {},
		{"amountUsd": 10, "payTo": "0x1111111111111111111111111111111111111111"},
		{"amountUsd": 10, "accountId": "acct_x"},
	} {
		e.must(e.do(req{method: "POST", path: "/v1/credits/x402/top-up", key: root, idem: idem(), body: body}), 400, "validation_failed")
	}
	for _, usd := range []float64{5, 500, 19.99} {
		e.must(e.do(req{method: "POST", path: "/v1/credits/x402/top-up", key: root, idem: idem(), body: map[string]any{"amountUsd": usd}}), 402, "payment_required")
	}
}
