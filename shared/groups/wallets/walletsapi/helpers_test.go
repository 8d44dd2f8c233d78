package walletsapi_test

import (
	"context"
	"math"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/harness/apitest"
)

// newWallet creates a wallet in the key's scope (headers may select a
// project) and returns its id and address.
func newWallet(t *testing.T, e *apitest.Env, key string, headers map[string]string) (string, common.Address) {
	t.Helper()
	w := e.Must(post(e, key, "/wallets", map[string]any{"label": t.Name()}, headers), 201)
	return w.Str("id"), common.HexToAddress(w.Str("address"))
}

// fund gives addr base units of each asset from the local chain's faucet.
func fund(t *testing.T, dev *devchain.Chain, addr common.Address, amounts map[string]int64) {
	t.Helper()
	for asset, n := range amounts {
		if _, err := dev.Faucet().Fund(context.Background(), addr, asset, big.NewInt(n)); err != nil {
			t.Fatal(err)
		}
	}
}

var addrSeq atomic.Int64

// freshAddress is an address nobody has used: a recipient whose balance
// starts at zero.
func freshAddress() common.Address {
	return common.BigToAddress(big.NewInt(time.Now().UnixNano()*1000 + addrSeq.Add(1)))
}

func txQuote(e *apitest.Env, key, walletID string, to common.Address, asset, amount string) *apitest.Resp {
	return post(e, key, "/wallets/"+walletID+"/transactions/quote", map[string]any{"chainId": 1337, "to": to.Hex(), "asset": asset, "amount": amount}, nil)
}

func send(e *apitest.Env, key, walletID, quoteID string) *apitest.Resp {
	return post(e, key, "/wallets/"+walletID+"/transactions", map[string]any{"quoteId": quoteID}, nil)
}

// setPolicy replaces a wallet's policy over revision rev.
func setPolicy(e *apitest.Env, key, walletID string, rev int64, defaultAction string, rules ...map[string]any) *apitest.Resp {
	if rules == nil {
		rules = []map[string]any{}
	}
	return e.Do(apitest.Req{Method: "PATCH", Path: "/v1/wallets/" + walletID + "/policy", Key: key, Idem: apitest.Idem(),
		Body: map[string]any{"expectedRevision": rev, "defaultAction": defaultAction, "rules": rules}})
}

func decide(e *apitest.Env, key, approvalID, decision string) *apitest.Resp {
	return post(e, key, "/approvals/"+approvalID, map[string]any{"decision": decision}, nil)
}

// micro reads a credit amount the API answered as a JSON number in exact
// micro-credits (the API has at most six decimals).
func micro(credits float64) int64 { return int64(math.Round(credits * 1e6)) }

// txCount is how many transactions the wallet lists.
func txCount(t *testing.T, e *apitest.Env, key, walletID string) int {
	t.Helper()
	return len(e.Must(get(e, key, "/wallets/"+walletID+"/transactions", nil), 200).Body["data"].([]any))
}

func str(m any, field string) string {
	s, _ := m.(map[string]any)[field].(string)
	return s
}
