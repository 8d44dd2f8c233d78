package walletsapi_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/work"
	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// A wallet's private key is at rest only sealed: after creating wallets,
// sending and signing, no store write, response, log line or webhook
// message holds it in any encoding. The test opens the sealed key with the
// server's envelope key (as only the service may) to know what to search
// for, and checks it is the wallet's key.
func TestNoPrivateKeyIsStoredAnsweredLoggedOrQueued(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		signer, _ := e.Child(root, map[string]any{"label": "signer"})
		approver, _ := e.Child(root, map[string]any{"label": "approver"})
		var answers [][]byte
		call := func(r *apitest.Resp, status int) *apitest.Resp {
			t.Helper()
			e.Must(r, status)
			answers = append(answers, r.Raw)
			return r
		}
		receiver := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer receiver.Close()
		call(post(e, root, "/webhooks", map[string]any{"url": receiver.URL + "/in", "events": []string{"*"}}, nil), 201)

		type made struct {
			id   string
			addr common.Address
		}
		var ws []made
		for range 2 {
			w := call(post(e, root, "/wallets", map[string]any{}, nil), 201)
			ws = append(ws, made{w.Str("id"), common.HexToAddress(w.Str("address"))})
		}
		for _, w := range ws {
			fund(t, dev, w.addr, map[string]int64{"ETH": 1e17, "USDC": 5_000_000})
			for _, asset := range []string{"ETH", "USDC"} {
				q := call(txQuote(e, root, w.id, freshAddress(), asset, "1000"), 201)
				tx := call(send(e, root, w.id, q.Str("id")), 202)
				answers = append(answers, waitTx(t, e, root, w.id, tx.Str("id")).Raw)
			}
			sq := call(post(e, signer, "/wallets/"+w.id+"/signatures/quote", map[string]any{"type": "personal_sign", "message": "proof"}, nil), 201)
			call(decide(e, approver, sq.Str("approvalId"), "approve"), 200)
			call(post(e, signer, "/wallets/"+w.id+"/signatures", map[string]any{"quoteId": sq.Str("id")}, nil), 201)
			answers = append(answers, call(get(e, root, "/wallets/"+w.id+"/transactions", nil), 200).Raw)
		}

		var queued [][]byte
		ms, err := e.Queue(work.Webhooks).Receive(context.Background(), 10, time.Minute, 0)
		for err == nil && len(ms) > 0 {
			for _, m := range ms {
				queued = append(queued, m.Body)
			}
			ms, err = e.Queue(work.Webhooks).Receive(context.Background(), 10, time.Minute, 0)
		}
		if err != nil || len(queued) == 0 {
			t.Fatalf("webhook queue: %d messages, %v", len(queued), err)
		}
		// The events were published, so their data (in the deliveries
		// written to the store) is searched below.
		for _, ev := range []string{"wallet.created", "wallet.transaction.confirmed", "wallet.signature.created"} {
			if !bytes.Contains(bytes.Join(e.Writes(), nil), []byte(ev)) {
				t.Fatalf("event %s was not published", ev)
			}
		}

		acct := accountOf(t, e)
		for _, w := range ws {
			it, err := e.Store.Get(context.Background(), store.Key{PK: "acct#" + acct, SK: "wal#-#" + w.id})
			if err != nil {
				t.Fatal(err)
			}
			sealed := it.Bytes("key")
			raw, err := e.Sealer.Open(context.Background(), sealed, []byte("wallet-key\x00"+acct+"\x00"+w.id+"\x00"+w.addr.Hex()))
			if err != nil {
				t.Fatalf("open the sealed key: %v", err)
			}
			k, err := crypto.ToECDSA(raw)
			if err != nil || crypto.PubkeyToAddress(k.PublicKey) != w.addr {
				t.Fatalf("the sealed key is not the wallet's (%v)", err)
			}
			var writes [][]byte
			for _, b := range e.Writes() {
				if !bytes.Equal(b, sealed) {
					writes = append(writes, b)
				}
			}
			if len(writes) == len(e.Writes()) {
				t.Fatal("the sealed key was never written")
			}
			for where, haystack := range map[string][][]byte{
				"a response": answers, "the server log": {[]byte(e.Logs.String())}, "a store write": writes, "the webhook queue": queued,
				"the sealed key itself": {sealed},
			} {
				for _, secret := range []string{string(raw), hex.EncodeToString(raw), new(big.Int).SetBytes(raw).String()} {
					for _, h := range haystack {
						if apitest.Holds(h, secret) {
							t.Fatalf("%s holds wallet %s's private key", where, w.id)
						}
					}
				}
			}
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}, Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
}

// accountOf is the one account an Env's writes name.
func accountOf(t *testing.T, e *apitest.Env) string {
	t.Helper()
	for _, b := range e.Writes() {
		if s := string(b); strings.HasPrefix(s, "acct#acct_") {
			return strings.TrimPrefix(s, "acct#")
		}
	}
	t.Fatal("no account written")
	return ""
}
