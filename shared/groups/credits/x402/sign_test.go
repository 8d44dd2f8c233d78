package x402

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
)

func TestSign_ProducesVerifiableDefaultAuthorization(t *testing.T) {
	key, req := newKey(t), testRequirements()
	p1, p2 := signTest(t, key, req), signTest(t, key, req)

	if p1.X402Version != Version || p1.Accepted != req {
		t.Fatalf("payload does not echo the requirements: %+v", p1)
	}
	auth, err := p1.Payload.Authorization.Parse()
	if err != nil {
		t.Fatal(err)
	}
	if auth.From != crypto.PubkeyToAddress(key.PublicKey) || auth.To.Hex() != req.PayTo || auth.Value.String() != req.Amount {
		t.Fatalf("authorization does not match requirements: %+v", p1.Payload.Authorization)
	}
	if auth.ValidAfter.Int64() != testNow.Add(-10*time.Minute).Unix() || auth.ValidBefore.Int64() != testNow.Unix()+req.MaxTimeoutSeconds {
		t.Fatalf("default window %s..%s", auth.ValidAfter, auth.ValidBefore)
	}
	if p1.Payload.Authorization.Nonce == p2.Payload.Authorization.Nonce {
		t.Fatal("two signatures share a nonce")
	}
	terms, _ := req.Terms()
	sig, _ := p1.Payload.SignatureBytes()
	if sig[64] != 27 && sig[64] != 28 {
		t.Fatalf("v = %d, want 27 or 28", sig[64])
	}
	if signer, err := RecoverSigner(auth.Digest(terms.Domain), sig); err != nil || signer != auth.From {
		t.Fatalf("signature recovers to %s, %v", signer.Hex(), err)
	}
}
