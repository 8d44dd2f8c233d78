package wallets

import (
	"context"
	"fmt"
	"math/big"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/groups/wallets/wallettest"
)

// laggingPool is a node whose transaction pool has not caught up with the
// head yet: it refuses the first sends as geth's pool refuses a sender
// whose funds arrived in a block it has not applied.
type laggingPool struct {
	chain.Client
	refusals atomic.Int32 // sends still to refuse
}

func (p *laggingPool) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	if p.refusals.Add(-1) >= 0 {
		return fmt.Errorf("insufficient funds for gas * price + value: balance 0, tx cost %s, overshot %s", tx.Cost(), tx.Cost())
	}
	return p.Client.SendTransaction(ctx, tx)
}

// lagEnv is a service on b whose chain's pool refuses its first refusals
// sends for funds, and a wallet funded with 1 ETH.
func lagEnv(t *testing.T, b teststores.Backend, refusals int32) (*Service, *devchain.Chain, *laggingPool, Scope, string) {
	t.Helper()
	env := wallettest.Open(t, b)
	net := *env.Chain.Network()
	pool := &laggingPool{Client: net.Client}
	pool.refusals.Store(refusals)
	net.Client = pool
	nets, err := chain.NewNetworks(&net)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Store: env.Store, Sealer: env.Sealer, Networks: nets, PriceMicro: 100_000})
	sc := Scope{AccountID: wallettest.AccountID}
	w, err := s.Create(context.Background(), sc, WalletCreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Chain.Faucet().Fund(context.Background(), common.HexToAddress(w.Address), "ETH", big.NewInt(1e18)); err != nil {
		t.Fatal(err)
	}
	return s, env.Chain, pool, sc, w.ID
}

// A node that refuses a send for funds its head shows the wallet holds
// (its pool lags the block that funded the wallet, as geth's does for a
// moment after each block under load) has not refused it for good: the
// send stays queued, is sent again by the next pass, and confirms.
func TestASendRefusedForFundsTheHeadHoldsIsSentAgainAndConfirms(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			s, dev, pool, sc, walletID := lagEnv(t, b, 2)
			to := common.BigToAddress(big.NewInt(0xc0ffee))
			q, err := s.QuoteTransaction(context.Background(), sc, walletID, TxQuoteRequest{ChainID: devchain.ChainID, To: to.Hex(), Asset: "ETH", Amount: "1000"})
			if err != nil {
				t.Fatal(err)
			}
			v, _, err := s.CreateTransaction(context.Background(), sc, walletID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1")
			if err != nil {
				t.Fatal(err)
			}
			done := settleAll(t, s, sc, walletID, v.ID)
			if done.Status != StatusConfirmed || done.NetworkFee.GasUsed == nil {
				t.Fatalf("the send ended %s: %+v", done.Status, done.Failure)
			}
			if pool.refusals.Load() >= 0 {
				t.Fatal("the pool refused nothing: the test tested nothing")
			}
			if got, err := dev.Client().BalanceAt(context.Background(), to, nil); err != nil || got.Cmp(big.NewInt(1000)) != 0 {
				t.Fatalf("the recipient holds %v (%v)", got, err)
			}
		})
	}
}

// A refusal for funds the head does not show either is final: the send
// fails as broadcast_rejected and its nonce goes back to the wallet.
func TestASendRefusedForFundsTheHeadLacksFails(t *testing.T) {
	s, _, _, sc, walletID := lagEnv(t, teststores.Embedded, 0)
	signed, rev := brokeSend(t, s, sc, walletID)
	n, err := s.broadcast(context.Background(), signed)
	if err != nil || n == nil || n.Status != StatusFailed || n.Failure.Code != "broadcast_rejected" || n.Nonce != nil {
		t.Fatalf("broadcast: %v %+v", err, n)
	}
	if _, _, err := s.transition(context.Background(), signed, rev, n); err != nil {
		t.Fatal(err)
	}
	w, err := s.load(context.Background(), sc, walletID)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.item.Int(fmt.Sprintf("n%d", signed.ChainID)); got != int64(*signed.Nonce) {
		t.Fatalf("the wallet's next nonce is %d, not the refused send's %d", got, *signed.Nonce)
	}
}

// Two advancers that both see a send refused for good decide its nonce
// each from what they read: one gives the nonce back to the wallet, the
// other (which read the counter after the first gave it back) fills it
// with a transfer to itself. Whichever records its decision first, the
// nonce ends either free (the counter back at it, no filler) or filled
// (a filler, the counter past it), never both: both would send two
// transactions with one nonce, and refuse a later send of the wallet.
func TestTwoAdvancersOfARefusedSendLeaveItsNonceFreeOrFilledNeverBoth(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s, _, _, sc, walletID := lagEnv(t, b, 0)
			signed, rev := brokeSend(t, s, sc, walletID)
			first, err := s.broadcast(ctx, signed)
			if err != nil || first == nil || first.Status != StatusFailed {
				t.Fatalf("first advancer: %v %+v", err, first)
			}
			second, err := s.broadcast(ctx, signed)
			if err != nil || second == nil || second.Status != StatusFailed {
				t.Fatalf("second advancer: %v %+v", err, second)
			}
			// The second records its decision first; the first loses the race.
			if _, _, err := s.transition(ctx, signed, rev, second); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.transition(ctx, signed, rev, first); err != nil {
				t.Fatal(err)
			}
			final, err := s.loadTx(ctx, sc, walletID, signed.ID)
			if err != nil {
				t.Fatal(err)
			}
			w, err := s.load(ctx, sc, walletID)
			if err != nil {
				t.Fatal(err)
			}
			counter := w.item.Int(fmt.Sprintf("n%d", signed.ChainID))
			nonce := int64(*signed.Nonce)
			switch {
			case final.Filler != "" && counter != nonce+1:
				t.Fatalf("nonce %d has a filler and the wallet's next nonce is %d: two transactions with one nonce", nonce, counter)
			case final.Filler == "" && (final.Nonce != nil || counter != nonce):
				t.Fatalf("nonce %d left neither filled nor free: next nonce %d, the send's %v", nonce, counter, final.Nonce)
			}
		})
	}
}

// brokeSend is a signed send of walletID whose bytes come from a sender
// that holds nothing, so that every node refuses it for good, and the
// revision of its record.
func brokeSend(t *testing.T, s *Service, sc Scope, walletID string) (*txRec, int64) {
	t.Helper()
	q, err := s.QuoteTransaction(context.Background(), sc, walletID, TxQuoteRequest{ChainID: devchain.ChainID, To: common.BigToAddress(big.NewInt(0xc0ffee)).Hex(), Asset: "ETH", Amount: "1000"})
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := s.CreateTransaction(context.Background(), sc, walletID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.loadTx(context.Background(), sc, walletID, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.sign(context.Background(), rec, 1)
	if err != nil || signed == nil || signed.Raw == "" {
		t.Fatalf("sign: %v %+v", err, signed)
	}
	var tx types.Transaction
	if err := tx.UnmarshalBinary(hexutil.MustDecode(signed.Raw)); err != nil {
		t.Fatal(err)
	}
	broke, _ := crypto.GenerateKey()
	again, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: tx.ChainId(), Nonce: tx.Nonce(), GasTipCap: tx.GasTipCap(), GasFeeCap: tx.GasFeeCap(),
		Gas: tx.Gas(), To: tx.To(), Value: tx.Value()}), types.LatestSignerForChainID(tx.ChainId()), broke)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := again.MarshalBinary()
	signed.Raw, signed.From = hexutil.Encode(raw), crypto.PubkeyToAddress(broke.PublicKey).Hex()
	return signed, 2
}
