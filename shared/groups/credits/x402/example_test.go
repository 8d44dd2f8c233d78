package x402_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/groups/credits/x402"
	"platformapi/shared/groups/credits/x402/localfacilitator"
)

// The server side of a top-up: challenge, decode the paid retry, verify,
// settle, and only then credit.
func Example() {
	dir, _ := os.MkdirTemp("", "x402-example")
	defer os.RemoveAll(dir)
	st, _ := boltstore.Open(filepath.Join(dir, "data.db"))
	defer st.Close()
	var facilitator x402.Facilitator = localfacilitator.New(st, localfacilitator.Config{})

	// 1. Requirements come from server configuration and the request's price.
	req := x402.PaymentRequirements{
		Scheme:            x402.SchemeExact,
		Network:           "eip155:84532",
		Amount:            x402.USDCFromCents(500), // amountUsd 5.00
		Asset:             "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		PayTo:             "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 300,
		Extra:             x402.Extra{Name: "USDC", Version: "2"},
	}

	// 2. First request: 402 with Payment-Required.
	challenge, _ := x402.EncodeHeader(x402.PaymentRequired{
		X402Version: x402.Version,
		Error:       "payment required",
		Resource:    x402.ResourceInfo{URL: "http://127.0.0.1:8080/v1/credits/x402/top-up", MimeType: "application/json"},
		Accepts:     []x402.PaymentRequirements{req},
	})

	// (client) decode the challenge, sign, retry with Payment-Signature.
	pr, _ := x402.DecodePaymentRequired(challenge)
	key, _ := crypto.GenerateKey()
	payment, _ := x402.Sign(key, pr.Accepts[0], x402.SignOptions{})
	retry := http.Header{}
	value, _ := x402.EncodeHeader(payment)
	retry.Set(x402.HeaderPaymentSignature, value)

	// 3. Paid retry: decode (malformed → 400), verify and settle (rejected → 402).
	p, ok, err := x402.PaymentFromHeaders(retry)
	if !ok || err != nil {
		fmt.Println("400 or 402 challenge again:", err)
		return
	}
	ctx := context.Background()
	if v, err := facilitator.Verify(ctx, p, req); err != nil || !v.IsValid {
		fmt.Println("402:", v.InvalidReason, err)
		return
	}
	settled, err := facilitator.Settle(ctx, p, req)
	if err != nil || !settled.Success {
		fmt.Println("402:", settled.ErrorReason, err)
		return
	}
	// 4. Credit the account, then answer 200 with Payment-Response.
	receipt, _ := x402.EncodeHeader(settled)
	fmt.Println("credited:", settled.Success, len(receipt) > 0)

	// The same payment again is refused.
	again, _ := facilitator.Settle(ctx, p, req)
	fmt.Println("replay:", again.ErrorReason)
	// Output:
	// credited: true true
	// replay: invalid_exact_evm_nonce_already_used
}
