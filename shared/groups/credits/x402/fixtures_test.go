package x402

import (
	"crypto/ecdsa"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
)

// testRequirements is what a server on Base Sepolia would ask for $5.
func testRequirements() PaymentRequirements {
	return PaymentRequirements{
		Scheme:            SchemeExact,
		Network:           "eip155:84532",
		Amount:            USDCFromCents(500),
		Asset:             "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		PayTo:             "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 300,
		Extra:             Extra{Name: "USDC", Version: "2"},
	}
}

var testNow = time.Unix(1_760_000_000, 0)

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func signTest(t *testing.T, key *ecdsa.PrivateKey, req PaymentRequirements) PaymentPayload {
	t.Helper()
	p, err := Sign(key, req, SignOptions{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func encode(t *testing.T, v any) string {
	t.Helper()
	s, err := EncodeHeader(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
