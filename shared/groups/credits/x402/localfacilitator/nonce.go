package localfacilitator

import (
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/credits/x402"
)

// TransactionPrefix marks every transaction this facilitator reports, so a
// local pseudo hash can never be mistaken for an on-chain one.
const TransactionPrefix = "local:"

// nonceRetention is how long a nonce record outlives its authorization's
// validBefore. Past validBefore the window check already rejects the
// authorization, so the record is no longer needed to stop a replay; the
// margin covers clock adjustments.
const nonceRetention = 24 * time.Hour

// nonceKey identifies an authorization the way the token contract does:
// EIP-3009 nonces are per token contract (on one chain) and per payer. Every
// part is canonical (decimal chain id, lowercase hex), so two spellings of
// one authorization share one key.
func nonceKey(terms x402.Terms, auth x402.TransferAuthorization) store.Key {
	pk := fmt.Sprintf("x402nonce#eip155:%d#%s#%s#%s",
		terms.Domain.ChainID,
		strings.ToLower(terms.Domain.VerifyingContract.Hex()),
		strings.ToLower(auth.From.Hex()),
		hexutil.Encode(auth.Nonce[:]))
	return store.Key{PK: pk, SK: "nonce"}
}

// nonceRecord is the item whose conditional creation settles a payment.
func nonceRecord(v verdict, network, tx string, now time.Time, skew time.Duration) store.Item {
	it := store.NewItem(v.key)
	it["payer"] = v.payer.Hex()
	it["payTo"] = v.auth.To.Hex()
	it["value"] = v.auth.Value.String()
	it["network"] = network
	it["transaction"] = tx
	it["settledAt"] = now.Unix()
	// validBefore fits in int64: the window check bounded it near now.
	it[store.AttrExpiresAt] = v.auth.ValidBefore.Int64() + int64((skew + nonceRetention).Seconds())
	return it
}

// pseudoTransaction derives a deterministic stand-in for a transaction hash
// from the authorization's EIP-712 digest.
func pseudoTransaction(digest common.Hash) string {
	return TransactionPrefix + crypto.Keccak256Hash([]byte("x402 localfacilitator settlement"), digest[:]).Hex()
}
