package creditsapi_test

import (
	"crypto/ecdsa"
	"platformapi/shared/harness/apitest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/groups/credits/x402"
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
func challenge(e *apitest.Env, key, idemKey string, usd float64) x402.PaymentRequirements {
	e.T.Helper()
	r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/credits/x402/top-up", Key: key, Idem: idemKey, Body: map[string]any{"amountUsd": usd}}), 402, "payment_required")
	pr, err := x402.DecodePaymentRequired(r.Header.Get("Payment-Required"))
	if err != nil {
		e.T.Fatalf("Payment-Required: %v", err)
	}
	if pr.X402Version != 2 || len(pr.Accepts) != 1 {
		e.T.Fatalf("challenge = %+v", pr)
	}
	return pr.Accepts[0]
}

func pay(e *apitest.Env, key, idemKey string, usd float64, p x402.PaymentPayload) *apitest.Resp {
	e.T.Helper()
	hdr, err := x402.EncodeHeader(p)
	if err != nil {
		e.T.Fatal(err)
	}
	return e.Do(apitest.Req{Method: "POST", Path: "/v1/credits/x402/top-up", Key: key, Idem: idemKey, Body: map[string]any{"amountUsd": usd},
		Headers: map[string]string{"Payment-Signature": hdr}})
}

func sign(t *testing.T, e *apitest.Env, k *ecdsa.PrivateKey, req x402.PaymentRequirements, opts x402.SignOptions) x402.PaymentPayload {
	t.Helper()
	if opts.Now.IsZero() {
		opts.Now = e.Clock.Now()
	}
	p, err := x402.Sign(k, req, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTopUpChallengesThenCreditsExactlyOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		ik := apitest.Idem()
		requirements := challenge(e, root, ik, 12.34)
		if requirements.Amount != "12340000" || requirements.PayTo != apitest.TopUpConfig.PayTo || requirements.Asset != apitest.TopUpConfig.Asset ||
			requirements.Network != "eip155:84532" || requirements.Scheme != "exact" || requirements.Extra.Name != "USDC" {
			t.Fatalf("requirements = %+v", requirements)
		}
		// The challenge was not stored: the paid retry with the same key runs.
		r := e.Must(pay(e, root, ik, 12.34, sign(t, e, payer(t), requirements, x402.SignOptions{})), 200)
		if r.Body["creditedUsd"].(float64) != 12.34 || r.Body["creditedCredits"].(float64) != 1234 || r.Body["balance"].(float64) != 1235 {
			t.Fatalf("top-up = %s", r.Raw)
		}
		settle, err := x402.DecodeSettleResponse(r.Header.Get("Payment-Response"))
		if err != nil || !settle.Success || settle.Network != "eip155:84532" {
			t.Fatalf("Payment-Response = %+v, %v", settle, err)
		}
		if r.Header.Get("X-Service-Paid-Agent-Receipt") != r.Str("receiptId") || !strings.HasPrefix(r.Str("receiptId"), "rcpt_") {
			t.Fatalf("receipt header %q, body %q", r.Header.Get("X-Service-Paid-Agent-Receipt"), r.Str("receiptId"))
		}
		// A replay returns the stored 200 and credits nothing more.
		again := e.Do(apitest.Req{Method: "POST", Path: "/v1/credits/x402/top-up", Key: root, Idem: ik, Body: map[string]any{"amountUsd": 12.34}})
		e.Must(again, 200)
		if again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Payment-Response") == "" {
			t.Fatalf("replay headers %v", again.Header)
		}
		if got := e.Balance(root); got != 1235 {
			t.Fatalf("balance after replay = %v", got)
		}
	})
}

func TestOnePaymentAuthorizationCreditsAtMostOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		requirements := challenge(e, root, apitest.Idem(), 5)
		p := sign(t, e, payer(t), requirements, x402.SignOptions{})
		e.Must(pay(e, root, apitest.Idem(), 5, p), 200)
		// The same payment under a new idempotency key.
		e.Must(pay(e, root, apitest.Idem(), 5, p), 402, "payment_required")
		// Concurrent retries of another payment under different keys.
		p2 := sign(t, e, payer(t), requirements, x402.SignOptions{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := pay(e, root, apitest.Idem(), 5, p2)
				if r.Status == 200 {
					mu.Lock()
					ok++
					mu.Unlock()
				} else if r.Status != 402 {
					t.Errorf("concurrent retry: %d %s", r.Status, r.Raw)
				}
			}()
		}
		wg.Wait()
		if ok != 1 {
			t.Fatalf("one authorization credited %d times", ok)
		}
		if got := e.Balance(root); got != 1001 {
			t.Fatalf("balance = %v, want 1 + 500 + 500", got)
		}
	})
}

func TestRejectedPaymentsCreditNothing(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	requirements := challenge(e, root, apitest.Idem(), 10)
	key := payer(t)
	now := e.Clock.Now()
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
			r := e.Must(pay(e, root, apitest.Idem(), 10, p), 402, "payment_required")
			if r.Header.Get("Payment-Required") == "" {
				t.Fatal("a rejected payment must carry a fresh challenge")
			}
		})
	}
	if got := e.Balance(root); got != 1 {
		t.Fatalf("balance = %v after rejected payments", got)
	}
}

func TestTopUpBodyIsOnlyAnAmountOf5To500WithTwoDecimals(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	for _, body := range []map[string]any{
		{"amountUsd": 4.99}, {"amountUsd": 500.01}, {"amountUsd": 5.001}, {"amountUsd": "10"}, {},
		{"amountUsd": 10, "payTo": "0x1111111111111111111111111111111111111111"},
		{"amountUsd": 10, "accountId": "acct_x"},
	} {
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/credits/x402/top-up", Key: root, Idem: apitest.Idem(), Body: body}), 400, "validation_failed")
	}
	for _, usd := range []float64{5, 500, 19.99} {
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/credits/x402/top-up", Key: root, Idem: apitest.Idem(), Body: map[string]any{"amountUsd": usd}}), 402, "payment_required")
	}
}

// A payment header that cannot be decoded is a rejected payment: a 402 with
// a fresh challenge saying why, not stored, so the same Idempotency-Key can
// still complete the purchase.
func TestAMalformedPaymentIsRejectedAndTheSameKeyCanStillPay(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		ik := apitest.Idem()
		for _, bad := range []string{"!!!not base64", "bm90IGpzb24", "e30"} {
			r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/credits/x402/top-up", Key: root, Idem: ik, Body: map[string]any{"amountUsd": 10},
				Headers: map[string]string{"Payment-Signature": bad}}), 402, "payment_required")
			pr, err := x402.DecodePaymentRequired(r.Header.Get("Payment-Required"))
			if err != nil || len(pr.Accepts) != 1 || pr.Error == "" {
				t.Fatalf("%q: challenge %+v %v, want requirements and the reason", bad, pr, err)
			}
			if r.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("%q: a rejected payment was replayed from storage", bad)
			}
		}
		requirements := challenge(e, root, ik, 10)
		e.Must(pay(e, root, ik, 10, sign(t, e, payer(t), requirements, x402.SignOptions{})), 200)
		if got := e.Balance(root); got != 1001 {
			t.Fatalf("balance = %v, want 1001", got)
		}
	})
}
