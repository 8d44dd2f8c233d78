package sdktest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"fmt"
	"log"
	"math/big"
	"os"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	platform "github.com/platformapi/platformapi/sdk/go"
)

// ethereumSigner is a platform.Signer written with go-ethereum: it signs the
// EIP-3009 transferWithAuthorization the top-up asks for, as EIP-712 typed
// data of the token's domain, with a local key. now is the clock the
// validity window starts from (time.Now outside tests).
func ethereumSigner(key *ecdsa.PrivateKey, now func() time.Time) platform.Signer {
	return platform.SignerFunc(func(_ context.Context, req platform.PaymentRequirements) (platform.ExactPayload, error) {
		chainID, err := req.ChainID()
		if err != nil {
			return platform.ExactPayload{}, err
		}
		var nonce [32]byte
		if _, err := rand.Read(nonce[:]); err != nil {
			return platform.ExactPayload{}, err
		}
		t := now()
		auth := platform.PaymentAuthorization{
			From:  crypto.PubkeyToAddress(key.PublicKey).Hex(),
			To:    common.HexToAddress(req.PayTo).Hex(),
			Value: req.Amount,
			// A verifier whose clock is behind ours still accepts it.
			ValidAfter:  strconv.FormatInt(t.Add(-10*time.Minute).Unix(), 10),
			ValidBefore: strconv.FormatInt(t.Add(time.Duration(req.MaxTimeoutSeconds)*time.Second).Unix(), 10),
			Nonce:       hexutil.Encode(nonce[:]),
		}
		typed := apitypes.TypedData{
			Types: apitypes.Types{
				"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
					{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"}},
				"TransferWithAuthorization": {{Name: "from", Type: "address"}, {Name: "to", Type: "address"},
					{Name: "value", Type: "uint256"}, {Name: "validAfter", Type: "uint256"},
					{Name: "validBefore", Type: "uint256"}, {Name: "nonce", Type: "bytes32"}},
			},
			PrimaryType: "TransferWithAuthorization",
			Domain: apitypes.TypedDataDomain{Name: req.Extra.Name, Version: req.Extra.Version,
				ChainId: (*math.HexOrDecimal256)(new(big.Int).SetUint64(chainID)), VerifyingContract: req.Asset},
			Message: apitypes.TypedDataMessage{"from": auth.From, "to": auth.To, "value": auth.Value,
				"validAfter": auth.ValidAfter, "validBefore": auth.ValidBefore, "nonce": auth.Nonce},
		}
		digest, _, err := apitypes.TypedDataAndHash(typed)
		if err != nil {
			return platform.ExactPayload{}, err
		}
		sig, err := crypto.Sign(digest, key)
		if err != nil {
			return platform.ExactPayload{}, err
		}
		sig[64] += 27 // the Ethereum convention for v
		return platform.ExactPayload{Signature: hexutil.Encode(sig), Authorization: auth}, nil
	})
}

// Buying credits with a go-ethereum key (compiled, not run; the top-up
// test pays the local chain with this signer).
func Example_goEthereumSigner() {
	ctx := context.Background()
	root := platform.New(platform.Options{BaseURL: "http://127.0.0.1:8080", APIKey: os.Getenv("ROOT_KEY")})
	key, err := crypto.HexToECDSA(os.Getenv("PAYER_PRIVATE_KEY")) // a wallet holding USDC
	if err != nil {
		log.Fatal(err)
	}
	top, err := root.TopUp(ctx, "10.00", ethereumSigner(key, time.Now))
	if err != nil || !top.OK {
		log.Fatal(err, top.Error)
	}
	fmt.Println(top.Value.CreditedCredits, top.Value.Settlement.Transaction)
}
