package x402

import (
	"bytes"
	"crypto/rand"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// The x402 v2 specification's example payment (Base Sepolia USDC, domain
// "USDC" version "2") is a published vector: its signature must recover to
// its "from" under our digest. The digest itself is pinned to catch drift.
func TestDigest_PublishedX402SpecVector(t *testing.T) {
	auth, err := Authorization{
		From:        "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		To:          "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		Value:       "10000",
		ValidAfter:  "1740672089",
		ValidBefore: "1740672154",
		Nonce:       "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480",
	}.Parse()
	if err != nil {
		t.Fatal(err)
	}
	dom := Domain{Name: "USDC", Version: "2", ChainID: 84532,
		VerifyingContract: common.HexToAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e")}
	digest := auth.Digest(dom)
	if want := "0xf256992871671abcb27ff92885a7afa46218724e5fc0bac35d050115aa1d22e6"; digest.Hex() != want {
		t.Errorf("digest %s, want %s", digest.Hex(), want)
	}
	sig, err := ExactPayload{Signature: "0x2d6a7588d6acca505cbf0d9a4a227e0c52c6c34008c8e8986a1283259764173608a2ce6496642e377d6da8dbbf5836e9bd15092f9ecab05ded3d6293af148b571c"}.SignatureBytes()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := RecoverSigner(digest, sig)
	if err != nil || signer != auth.From {
		t.Fatalf("recovered %s, %v; want %s", signer.Hex(), err, auth.From.Hex())
	}
}

// Our hand-rolled encoding must agree with go-ethereum's generic EIP-712
// implementation for arbitrary values.
func TestDigest_MatchesGoEthereumTypedData(t *testing.T) {
	for i := 0; i < 20; i++ {
		auth := TransferAuthorization{
			From: randomAddress(t), To: randomAddress(t),
			Value: randomUint(t, 256), ValidAfter: randomUint(t, 64), ValidBefore: randomUint(t, 64),
		}
		rand.Read(auth.Nonce[:])
		dom := Domain{Name: "USD Coin", Version: "2", ChainID: uint64(i*7919 + 1), VerifyingContract: randomAddress(t)}

		want, _, err := apitypes.TypedDataAndHash(typedData(dom, auth))
		if err != nil {
			t.Fatal(err)
		}
		if got := auth.Digest(dom); !bytes.Equal(got[:], want) {
			t.Fatalf("case %d: digest %x, go-ethereum %x", i, got, want)
		}
	}
}

func typedData(d Domain, a TransferAuthorization) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {
				{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"},
			},
			"TransferWithAuthorization": {
				{Name: "from", Type: "address"}, {Name: "to", Type: "address"},
				{Name: "value", Type: "uint256"}, {Name: "validAfter", Type: "uint256"},
				{Name: "validBefore", Type: "uint256"}, {Name: "nonce", Type: "bytes32"},
			},
		},
		PrimaryType: "TransferWithAuthorization",
		Domain: apitypes.TypedDataDomain{
			Name: d.Name, Version: d.Version,
			ChainId:           (*math.HexOrDecimal256)(new(big.Int).SetUint64(d.ChainID)),
			VerifyingContract: d.VerifyingContract.Hex(),
		},
		Message: apitypes.TypedDataMessage{
			"from": a.From.Hex(), "to": a.To.Hex(),
			"value": a.Value.String(), "validAfter": a.ValidAfter.String(), "validBefore": a.ValidBefore.String(),
			"nonce": a.Nonce[:],
		},
	}
}

func randomAddress(t *testing.T) common.Address {
	var a common.Address
	if _, err := rand.Read(a[:]); err != nil {
		t.Fatal(err)
	}
	return a
}

func randomUint(t *testing.T, bits int) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
