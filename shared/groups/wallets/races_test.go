package wallets

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/creditstest"
)

// The load rule holds for a send's hold as for the ledger's own changes: a
// send whose hold loses every race it may fails as unavailable and slices
// the account, on which the same call then commits.
func TestASendWhoseHoldKeepsLosingTheBalanceRaceSlicesTheAccount(t *testing.T) {
	loser := &creditstest.BalanceLoser{}
	s, dev, st := envOn(t, func(st store.Store) store.Store { loser.Store = st; return loser })
	ctx := context.Background()
	sc := Scope{AccountID: "acct_1"}
	w, err := s.Create(ctx, sc, WalletCreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for asset, amount := range map[string]*big.Int{"ETH": big.NewInt(1e18), "USDC": big.NewInt(5_000_000)} {
		if _, err := dev.Faucet().Fund(ctx, common.HexToAddress(w.Address), asset, amount); err != nil {
			t.Fatal(err)
		}
	}
	q, err := s.QuoteTransaction(ctx, sc, w.ID, TxQuoteRequest{ChainID: devchain.ChainID, To: "0x00000000000000000000000000000000000c0ffe", Asset: "USDC", Amount: "1000000"})
	if err != nil {
		t.Fatal(err)
	}
	loser.Lose(65)
	if _, _, err := s.CreateTransaction(ctx, sc, w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("send after 65 lost balance races: %v; want unavailable", err)
	}
	it, err := st.Get(ctx, store.Key{PK: "acct#acct_1", SK: "account"})
	if err != nil {
		t.Fatal(err)
	}
	if n := credits.SlicesOf(it); n != 8 {
		t.Fatalf("the account has %d slices after the send kept losing; want 8", n)
	}
	v, _, err := s.CreateTransaction(ctx, sc, w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1")
	if err != nil || v.Status != StatusQueued {
		t.Fatalf("send on the sliced account: %v %+v", err, v)
	}
	if b, err := credits.NewLedger(st, s.now).Balance(ctx, "acct_1"); err != nil || b != 10_000_000-100_000 {
		t.Fatalf("balance %d (%v) with one send's hold; want 9900000", b, err)
	}
}
