package sdktest_test

import (
	"math/big"
	"net/http"
	"os"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	platform "github.com/platformapi/platformapi/sdk/go"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// A wallet made through the SDK is read back, holds what the chain says,
// and signs a personal_sign message only once a key outside the
// requester's lineage approved it (the root, its ancestor, is refused); the
// signature recovers to the wallet's address.
func TestAManagedWalletSignsAnApprovedPersonalMessageThatRecoversToItsAddress(t *testing.T) {
	f := setupWith(t, localChain(t))
	root, _ := f.root(t, 10)

	created, err := root.CreateWallet(ctx(t), platform.WalletCreateRequest{Label: "ops"})
	w := must(created, err)(t)
	if created.Status != http.StatusCreated || created.IdempotencyKey == "" || !common.IsHexAddress(w.Address) || *w.Label != "ops" {
		t.Fatalf("create %+v %+v", created, w)
	}
	if got := must(root.GetWallet(ctx(t), w.ID))(t); got.Address != w.Address || got.Policy.Revision != 1 {
		t.Fatalf("read %+v", got)
	}
	var listed []string
	for lw, err := range root.AllWallets(ctx(t), platform.ListOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, lw.ID)
	}
	if !slices.Contains(listed, w.ID) {
		t.Fatalf("wallet %s not listed in %v", w.ID, listed)
	}

	// An external target knows chain 1337's native coin only.
	addr := common.HexToAddress(w.Address)
	funded := map[string]*big.Int{"ETH": big.NewInt(250_000_000_000_000_000)}
	if !f.external {
		funded["USDC"] = big.NewInt(3_000_000)
	}
	for asset, amount := range funded {
		f.fund(t, addr, asset, amount)
	}
	bal := must(root.WalletBalances(ctx(t), w.ID, 1337))(t)
	held := map[string]string{}
	for _, b := range bal.Data {
		if funded[b.Symbol] != nil {
			held[b.Symbol] = b.Amount
		}
	}
	for asset, amount := range funded {
		if held[asset] != amount.String() || bal.BlockNumber == 0 {
			t.Fatalf("balances %+v, want %s %s", bal, amount, asset)
		}
	}

	// A child key asks for the signature; a key beside it decides the
	// approval.
	signerKey := must(root.CreateAPIKey(ctx(t), platform.CreateKeyRequest{Label: "signer"}))(t)
	signer := f.c.WithAPIKey(signerKey.Secret)
	approverKey := must(root.CreateAPIKey(ctx(t), platform.CreateKeyRequest{Label: "approver"}))(t)
	approver := f.c.WithAPIKey(approverKey.Secret)
	msg := "sign in to example.org, nonce 42"
	q := must(signer.QuoteSignature(ctx(t), w.ID, platform.SigQuoteRequest{Type: "personal_sign", Message: msg}))(t)
	if q.Digest != hexutil.Encode(accounts.TextHash([]byte(msg))) || q.ApprovalID == nil {
		t.Fatalf("quote %+v", q)
	}
	// The default policy requires approval for signatures.
	early, err := signer.CreateSignature(ctx(t), w.ID, platform.SigCreateRequest{QuoteID: q.ID})
	if err != nil || early.OK || early.Status != http.StatusForbidden {
		t.Fatalf("signature before approval: %v %+v", err, early.Error)
	}
	if r, err := root.DecideApproval(ctx(t), *q.ApprovalID, platform.ApprovalDecision{Decision: "approve"}); err != nil || r.OK || r.Status != http.StatusForbidden {
		t.Fatalf("approved by the signer's parent: %v %+v", err, r)
	}
	must(approver.DecideApproval(ctx(t), *q.ApprovalID, platform.ApprovalDecision{Decision: "approve"}))(t)

	sig := must(signer.CreateSignature(ctx(t), w.ID, platform.SigCreateRequest{QuoteID: q.ID, ApprovalID: *q.ApprovalID}))(t)
	raw := hexutil.MustDecode(sig.Signature)
	if len(raw) != 65 || raw[64] < 27 {
		t.Fatalf("signature %s", sig.Signature)
	}
	raw[64] -= 27
	pub, err := crypto.SigToPub(accounts.TextHash([]byte(msg)), raw)
	if err != nil || crypto.PubkeyToAddress(*pub) != addr || sig.Address != w.Address {
		t.Fatalf("signature recovers to %v (%v), wallet %s", pub, err, w.Address)
	}
}

// An address-bound swap is quoted and prepared through the SDK; preparing
// changes nothing on the server, so it goes without an Idempotency-Key
// while the quote carries one.
func TestASwapForOnesOwnAddressIsPreparedWithoutAnIdempotencyKey(t *testing.T) {
	f := setupWith(t, localChain(t))
	if f.external {
		t.Skip("the API under test knows chain 1337 by RPC_URL_1337 alone: no test tokens, no pool")
	}
	root, _ := f.root(t, 10)
	const chainID = 1337

	var symbols []string
	for tok, err := range root.AllSwapTokens(ctx(t), platform.SwapTokenListOptions{ListOptions: platform.ListOptions{Limit: 1}, ChainID: chainID}) {
		if err != nil {
			t.Fatal(err)
		}
		symbols = append(symbols, tok.Symbol)
	}
	if !slices.Contains(symbols, "USDC") || !slices.Contains(symbols, "WETH") {
		t.Fatalf("tokens %v", symbols)
	}
	if r, err := root.ListSwapTokens(ctx(t), platform.SwapTokenListOptions{}); err != nil || r.OK || r.Status != http.StatusBadRequest {
		t.Fatalf("tokens without chainId: %v %d", err, r.Status)
	}

	key, _ := crypto.GenerateKey()
	me := crypto.PubkeyToAddress(key.PublicKey).Hex()
	q := must(root.QuoteSwap(ctx(t), platform.SwapQuoteRequest{FromAddress: me, FromChainID: chainID, ToChainID: chainID,
		FromToken: "USDC", ToToken: "WETH", FromAmount: "1000000"}))(t)
	p, err := root.PrepareSwap(ctx(t), platform.SwapPrepare{QuoteID: q.ID})
	prep := must(p, err)(t)
	if prep.RouteID != q.RouteID || prep.Transaction.From != me || prep.ApprovalTransaction == nil || p.IdempotencyKey != "" {
		t.Fatalf("prepared %+v (key %q)", prep, p.IdempotencyKey)
	}
	for _, req := range f.trip.requests("POST", "/v1/swaps/prepare") {
		if req.Header.Get("Idempotency-Key") != "" {
			t.Fatal("prepare sent an Idempotency-Key")
		}
	}
	for _, req := range f.trip.requests("POST", "/v1/swaps/quote") {
		if req.Header.Get("Idempotency-Key") == "" {
			t.Fatal("quote sent no Idempotency-Key")
		}
	}
	if st := must(root.GetSwapRoute(ctx(t), prep.RouteID, ""))(t); st.Status != "not_found" {
		t.Fatalf("route before sending: %+v", st)
	}
	var none []*platform.Swap
	for sw, err := range root.AllSwaps(ctx(t), platform.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		none = append(none, sw)
	}
	if len(none) != 0 {
		t.Fatalf("a prepared swap is not a managed one: %+v", none)
	}
}

// localChain is a server on the shared local chain; none for an external
// target, which has its own.
func localChain(t *testing.T) apitest.Options {
	if os.Getenv("PLATFORMAPI_URL") != "" {
		return apitest.Options{}
	}
	return apitest.Options{Parts: []apitest.Part{chaintest.On(chaintest.Shared(t))}}
}
