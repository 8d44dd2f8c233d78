package localfacilitator

import (
	"crypto/ecdsa"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/groups/credits/x402"
)

var testNow = time.Unix(1_760_000_000, 0)

func clock() time.Time { return testNow }

// testRequirements is what a server on Base Sepolia would ask for $5.
func testRequirements() x402.PaymentRequirements {
	return x402.PaymentRequirements{
		Scheme:            x402.SchemeExact,
		Network:           "eip155:84532",
		Amount:            x402.USDCFromCents(500),
		Asset:             "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		PayTo:             "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 300,
		Extra:             x402.Extra{Name: "USDC", Version: "2"},
	}
}

// newStore opens a real embedded store whose clock agrees with the
// facilitator's, so nonce records expire on the same timeline.
func newStore(t *testing.T) store.Store {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "x402.db"), boltstore.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newFacilitator(t *testing.T) *Facilitator {
	return New(newStore(t), Config{Now: clock})
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(t *testing.T, key *ecdsa.PrivateKey, req x402.PaymentRequirements, opts x402.SignOptions) x402.PaymentPayload {
	t.Helper()
	if opts.Now.IsZero() {
		opts.Now = testNow
	}
	p, err := x402.Sign(key, req, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
