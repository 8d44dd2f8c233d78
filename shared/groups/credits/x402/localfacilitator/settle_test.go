package localfacilitator

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/credits/x402"
)

func TestSettle_CorrectPaymentSettlesOnce(t *testing.T) {
	ctx, f, req, key := context.Background(), newFacilitator(t), testRequirements(), newKey(t)
	p := sign(t, key, req, x402.SignOptions{})
	payer := crypto.PubkeyToAddress(key.PublicKey).Hex()

	first, err := f.Settle(ctx, p, req)
	if err != nil || !first.Success || first.Payer != payer || first.Network != req.Network {
		t.Fatalf("first settle: %+v, %v", first, err)
	}
	auth, _ := p.Payload.Authorization.Parse()
	terms, _ := req.Terms()
	if !strings.HasPrefix(first.Transaction, TransactionPrefix) || first.Transaction != pseudoTransaction(auth.Digest(terms.Domain)) {
		t.Fatalf("transaction %q is not the local pseudo hash of the authorization", first.Transaction)
	}

	again, err := f.Settle(ctx, p, req)
	if err != nil || again.Success || again.ErrorReason != x402.ReasonNonceUsed || again.Transaction != "" {
		t.Fatalf("second settle: %+v, %v", again, err)
	}
	if v, err := f.Verify(ctx, p, req); err != nil || v.IsValid || v.InvalidReason != x402.ReasonNonceUsed {
		t.Fatalf("verify after settle: %+v, %v", v, err)
	}
}

// The nonce record is keyed canonically: spelling the same authorization
// differently (decimal nonce, lowercase addresses) is still a reuse.
func TestSettle_ReusedNonceInOtherSpellingRejected(t *testing.T) {
	ctx, f, req := context.Background(), newFacilitator(t), testRequirements()
	p := sign(t, newKey(t), req, x402.SignOptions{})
	if s, err := f.Settle(ctx, p, req); err != nil || !s.Success {
		t.Fatalf("settle: %+v, %v", s, err)
	}
	respelled := p
	a := &respelled.Payload.Authorization
	nonce, _ := new(big.Int).SetString(a.Nonce[2:], 16)
	a.Nonce, a.From, a.To = nonce.String(), strings.ToLower(a.From), strings.ToLower(a.To)

	if s, err := f.Settle(ctx, respelled, req); err != nil || s.Success || s.ErrorReason != x402.ReasonNonceUsed {
		t.Fatalf("respelled settle: %+v, %v", s, err)
	}
}

// EIP-3009 nonces are per payer: another payer may pick the same nonce.
func TestSettle_SameNonceOtherPayerSettles(t *testing.T) {
	ctx, f, req := context.Background(), newFacilitator(t), testRequirements()
	opts := x402.SignOptions{Nonce: [32]byte{1, 2, 3}}
	for i := 0; i < 2; i++ {
		if s, err := f.Settle(ctx, sign(t, newKey(t), req, opts), req); err != nil || !s.Success {
			t.Fatalf("payer %d: %+v, %v", i, s, err)
		}
	}
}

func TestSettle_RejectedPaymentRecordsNothing(t *testing.T) {
	ctx, f, req := context.Background(), newFacilitator(t), testRequirements()
	p := sign(t, newKey(t), req, x402.SignOptions{})
	forged := p
	forged.Payload.Authorization.ValidBefore = "1760000100"

	if s, err := f.Settle(ctx, forged, req); err != nil || s.Success || s.ErrorReason != x402.ReasonSignature {
		t.Fatalf("forged settle: %+v, %v", s, err)
	}
	if s, err := f.Settle(ctx, p, req); err != nil || !s.Success {
		t.Fatalf("genuine settle after forged one: %+v, %v", s, err)
	}
}

func TestSettle_ConcurrentSettlesOfOneAuthorizationSucceedOnce(t *testing.T) {
	ctx, f, req := context.Background(), newFacilitator(t), testRequirements()
	p := sign(t, newKey(t), req, x402.SignOptions{})

	const n = 32
	results := make([]x402.SettleResponse, n)
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			results[i], errs[i] = f.Settle(ctx, p, req)
		})
	}
	start.Done()
	done.Wait()

	successes := 0
	for i := range n {
		switch {
		case errs[i] != nil:
			t.Fatalf("settle %d: %v", i, errs[i])
		case results[i].Success:
			successes++
		case results[i].ErrorReason != x402.ReasonNonceUsed:
			t.Fatalf("settle %d: %+v", i, results[i])
		}
	}
	if successes != 1 {
		t.Fatalf("%d successes, want exactly 1", successes)
	}
}

// failingStore stands for a throttled or broken backend.
type failingStore struct{ store.Store }

func (failingStore) Get(context.Context, store.Key) (store.Item, error) {
	return nil, store.ErrUnavailable
}

func TestSettle_StoreFailureIsAnErrorNotARejection(t *testing.T) {
	f := New(failingStore{}, Config{Now: clock})
	req := testRequirements()
	_, err := f.Settle(context.Background(), sign(t, newKey(t), req, x402.SignOptions{}), req)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("err %v, want ErrUnavailable", err)
	}
}
