package wallets

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"platformapi/shared/adapters/envelope/localkey"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/wallets/wallettest"
)

// crashEnv is a service on embedded storage and a fresh local chain, with
// no queue: the test drives every step itself.
func crashEnv(t *testing.T) (*Service, *devchain.Chain, store.Store) {
	t.Helper()
	return envOn(t, func(st store.Store) store.Store { return st })
}

// envOn is crashEnv whose service uses wrap's store over the embedded one.
func envOn(t *testing.T, wrap func(store.Store) store.Store) (*Service, *devchain.Chain, store.Store) {
	t.Helper()
	env := wallettest.Open(t, teststores.Embedded)
	return New(Config{Store: wrap(env.Store), Sealer: env.Sealer, Networks: env.Networks, PriceMicro: 100_000}), env.Chain, env.Store
}

// queuedSend creates a funded wallet and a queued USDC send of 1 USDC.
func queuedSend(t *testing.T, s *Service, dev *devchain.Chain) (Scope, *txRec, int64, common.Address) {
	t.Helper()
	ctx := context.Background()
	sc := Scope{AccountID: "acct_1"}
	w, err := s.Create(ctx, sc, WalletCreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	addr := common.HexToAddress(w.Address)
	for asset, amount := range map[string]*big.Int{"ETH": big.NewInt(1e18), "USDC": big.NewInt(5_000_000)} {
		if _, err := dev.Faucet().Fund(ctx, addr, asset, amount); err != nil {
			t.Fatal(err)
		}
	}
	to := common.HexToAddress("0x00000000000000000000000000000000000c0ffe")
	q, err := s.QuoteTransaction(ctx, sc, w.ID, TxQuoteRequest{ChainID: devchain.ChainID, To: to.Hex(), Asset: "USDC", Amount: "1000000"})
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := s.CreateTransaction(ctx, sc, w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1")
	if err != nil || v.Status != StatusQueued {
		t.Fatalf("create: %v %+v", err, v)
	}
	it, err := s.st.Get(ctx, txKey(sc, w.ID, v.ID))
	if err != nil {
		t.Fatal(err)
	}
	rec, rev, err := decodeTx(it)
	if err != nil {
		t.Fatal(err)
	}
	return sc, rec, rev, to
}

func usdcOf(t *testing.T, s *Service, dev *devchain.Chain, who common.Address) *big.Int {
	t.Helper()
	b, err := s.balanceOf(context.Background(), dev.Client(), dev.USDC, who, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// settleAll advances a transaction until it is final and settled.
func settleAll(t *testing.T, s *Service, sc Scope, walletID, txID string) *WalletTransaction {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		more, err := s.Advance(context.Background(), sc, walletID, txID)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			v, err := s.PeekTransaction(context.Background(), sc, walletID, txID)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if time.Now().After(deadline) {
			t.Fatal("transaction never settled")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A process that dies after recording the signed transaction, before or
// after broadcasting it, is followed by one that finds the record: it
// sends the same bytes (same hash, same nonce) and the tokens move once.
func TestACrashAroundTheBroadcastSendsTheSameSignedTransactionOnce(t *testing.T) {
	s, dev, _ := crashEnv(t)
	for _, broadcastBeforeCrash := range []bool{false, true} {
		sc, rec, rev, to := queuedSend(t, s, dev)
		before := usdcOf(t, s, dev, to)
		signed, err := s.sign(context.Background(), rec, rev)
		if err != nil || signed == nil || signed.Raw == "" || *signed.Nonce != 0 {
			t.Fatalf("sign: %v %+v", err, signed)
		}
		if broadcastBeforeCrash {
			var tx types.Transaction
			if err := tx.UnmarshalBinary(hexutil.MustDecode(signed.Raw)); err != nil {
				t.Fatal(err)
			}
			if err := dev.Client().SendTransaction(context.Background(), &tx); err != nil {
				t.Fatal(err)
			}
			if _, err := devchain.WaitMined(context.Background(), dev.Client(), tx.Hash()); err != nil {
				t.Fatal(err)
			}
		}
		// The process died here; the next one advances the stored record.
		done := settleAll(t, s, sc, rec.WalletID, rec.ID)
		if done.Status != StatusConfirmed || *done.Hash != *signed.Hash || *done.Nonce != 0 || done.ChargedCredits != "0.1" {
			t.Fatalf("broadcast before crash %v: %+v", broadcastBeforeCrash, done)
		}
		if got := new(big.Int).Sub(usdcOf(t, s, dev, to), before); got.Cmp(big.NewInt(1_000_000)) != 0 {
			t.Fatalf("broadcast before crash %v: the recipient got %s", broadcastBeforeCrash, got)
		}
		if n, err := dev.Client().NonceAt(context.Background(), common.HexToAddress(rec.From), nil); err != nil || n != 1 {
			t.Fatalf("the wallet sent %d transactions (%v)", n, err)
		}
	}
}

// Two processes signing the same queued transaction at once: one records
// its signature, the other's write fails its condition, so one nonce is
// used and one signed transaction exists.
func TestConcurrentSignersRecordOneSignedTransaction(t *testing.T) {
	s, dev, _ := crashEnv(t)
	_, rec, rev, _ := queuedSend(t, s, dev)
	a, errA := s.sign(context.Background(), rec, rev)
	b, errB := s.sign(context.Background(), rec, rev)
	if errA != nil || errB != nil || a == nil || b != nil {
		t.Fatalf("first %+v %v, second %+v %v", a, errA, b, errB)
	}
	w, err := s.load(context.Background(), rec.scope(), rec.WalletID)
	if err != nil {
		t.Fatal(err)
	}
	if n := w.item.Int("n1337"); n != 1 {
		t.Fatalf("the wallet's next nonce is %d", n)
	}
}

// A transaction mined after its credit hold was released (the sweeper
// gives up on a hold past its deadline) reads as charged nothing, which
// is what the ledger did.
func TestAConfirmationAfterTheHoldWasSweptChargesNothing(t *testing.T) {
	s, dev, _ := crashEnv(t)
	sc, rec, _, _ := queuedSend(t, s, dev)
	if err := s.ledger.HoldOf(rec.AccountID, rec.HoldID, rec.Credits, rec.holdDeadline()).Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := settleAll(t, s, sc, rec.WalletID, rec.ID)
	if done.Status != StatusConfirmed || done.ChargedCredits != "0" {
		t.Fatalf("%+v", done)
	}
}

// A transaction no message carries (its enqueue failed, or the process
// died first) is taken to the end by the recheck, which then forgets it.
func TestTheRecheckCarriesAnUnqueuedTransactionToTheEnd(t *testing.T) {
	s, dev, st := crashEnv(t)
	sc, rec, _, _ := queuedSend(t, s, dev)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := s.Recheck(context.Background()); err != nil {
			t.Fatal(err)
		}
		v, err := s.PeekTransaction(context.Background(), sc, rec.WalletID, rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Status == StatusConfirmed && v.ChargedCredits == "0.1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recheck left it %+v", v)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pg, err := st.Query(context.Background(), store.Query{PK: "wallets#open"})
	if err != nil || len(pg.Items) != 0 {
		t.Fatalf("open index after settling: %v %v", pg.Items, err)
	}
}

// serviceOn is a service on st over the local chain dev, as a process
// started on that chain would build it.
func serviceOn(t *testing.T, st store.Store, sealer *localkey.Sealer, dev *devchain.Chain) *Service {
	t.Helper()
	nets, err := chain.NewNetworks(dev.Network())
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Store: st, Sealer: sealer, Networks: nets, PriceMicro: 100_000})
}

// sendUSDC quotes and creates a send of amount USDC base units from wallet
// walletID and takes it to the end.
func sendUSDC(t *testing.T, s *Service, sc Scope, walletID string, to common.Address, amount, call string) *WalletTransaction {
	t.Helper()
	ctx := context.Background()
	q, err := s.QuoteTransaction(ctx, sc, walletID, TxQuoteRequest{ChainID: devchain.ChainID, To: to.Hex(), Asset: "USDC", Amount: amount})
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := s.CreateTransaction(ctx, sc, walletID, TxCreateRequest{QuoteID: q.ID}, "key_1", call)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return settleAll(t, s, sc, walletID, v.ID)
}

// A chain that lost its last blocks while the store remembers the sends
// in them (here the chain restored from a copy taken before them): the
// wallet's next nonce is past the chain's, so the next send waits behind a
// gap. Its watch sends the lost transactions again from their stored
// bytes, every send is on the chain again, and the new one completes with
// its credit hold captured.
func TestASendAfterTheChainLostItsTailRefillsTheNonceGap(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dev, err := devchain.Open(ctx, filepath.Join(dir, "chain"), devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	st := teststores.Embedded.Open(t, time.Now)
	sealer, err := localkey.Open(filepath.Join(dir, "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Transact(ctx, credits.OpenAccountOps("acct_1", 10_000_000, "test", time.Now())); err != nil {
		t.Fatal(err)
	}
	s := serviceOn(t, st, sealer, dev)
	sc := Scope{AccountID: "acct_1"}
	w, err := s.Create(ctx, sc, WalletCreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	from := common.HexToAddress(w.Address)
	for asset, amount := range map[string]*big.Int{"ETH": big.NewInt(1e18), "USDC": big.NewInt(5_000_000)} {
		if _, err := dev.Faucet().Fund(ctx, from, asset, amount); err != nil {
			t.Fatal(err)
		}
	}
	// The tail the chain will lose starts here.
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "before"), os.DirFS(filepath.Join(dir, "chain"))); err != nil {
		t.Fatal(err)
	}
	if dev, err = devchain.Open(ctx, filepath.Join(dir, "chain"), devchain.Options{}); err != nil {
		t.Fatal(err)
	}
	s = serviceOn(t, st, sealer, dev)
	to := common.HexToAddress("0x00000000000000000000000000000000000c0ffe")
	var hashes []common.Hash
	for i := range 3 {
		v := sendUSDC(t, s, sc, w.ID, to, "1000000", fmt.Sprintf("call-%d", i))
		if v.Status != StatusConfirmed {
			t.Fatalf("send %d: %+v", i, v)
		}
		hashes = append(hashes, common.HexToHash(*v.Hash))
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}

	lost, err := devchain.Open(ctx, filepath.Join(dir, "before"), devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lost.Close() })
	if n, err := lost.Client().NonceAt(ctx, from, nil); err != nil || n != 0 {
		t.Fatalf("the restored chain has the wallet's nonce at %d (%v)", n, err)
	}
	s = serviceOn(t, st, sealer, lost)
	v := sendUSDC(t, s, sc, w.ID, to, "1000000", "call-after")
	if v.Status != StatusConfirmed || *v.Nonce != 3 || v.ChargedCredits != "0.1" {
		t.Fatalf("the send after the loss: %+v", v)
	}
	for i, h := range append(hashes, common.HexToHash(*v.Hash)) {
		if r, err := lost.Client().TransactionReceipt(ctx, h); err != nil || r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("send %d has no receipt on the chain: %v", i, err)
		}
	}
	if got := usdcOf(t, s, lost, to); got.Cmp(big.NewInt(4_000_000)) != 0 {
		t.Fatalf("the recipient has %s", got)
	}
}

// noting is a request that adds up what it is charged.
type noting struct{ charged int64 }

func (n *noting) Attribution() credits.Attribution {
	return credits.Attribution{RequestID: "req_1", KeyPath: []string{"key_1"}}
}
func (n *noting) Charged(micro int64) { n.charged += micro }

// A retry that finds the send its call's dead attempt created (that
// attempt's answer, with the audit event carrying its credit hold, never
// left) answers for the call: its own event carries the hold, so the
// charge is on an event once.
func TestARetryThatFindsItsDeadAttemptsSendCarriesItsHold(t *testing.T) {
	s, dev, _ := crashEnv(t)
	ctx := context.Background()
	sc := Scope{AccountID: "acct_1"}
	w, err := s.Create(ctx, sc, WalletCreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Faucet().Fund(ctx, common.HexToAddress(w.Address), "ETH", big.NewInt(1e18)); err != nil {
		t.Fatal(err)
	}
	q, err := s.QuoteTransaction(ctx, sc, w.ID, TxQuoteRequest{ChainID: devchain.ChainID, To: "0x00000000000000000000000000000000000c0ffe", Asset: "ETH", Amount: "1000"})
	if err != nil {
		t.Fatal(err)
	}
	dead, retry := &noting{}, &noting{}
	first, _, err := s.CreateTransaction(credits.WithRequest(ctx, dead), sc, w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-dead")
	if err != nil {
		t.Fatal(err)
	}
	again, replayed, err := s.CreateTransaction(credits.WithRequest(ctx, retry), sc, w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-dead")
	if err != nil || !replayed || again.ID != first.ID {
		t.Fatalf("retry: %+v %v %v", again, replayed, err)
	}
	if dead.charged != 100_000 || retry.charged != 100_000 {
		t.Fatalf("the dead attempt's event would carry %d, the retry's carries %d; want the hold, 100000, on each", dead.charged, retry.charged)
	}
}

// naming is a request whose audit event can be named, as the API kernel's
// are: it adds up what it charges and what it owes to other events.
type naming struct {
	id      string
	charged int64
	named   credits.ChargeName
	owed    map[credits.ChargeName]int64
}

func (n *naming) Attribution() credits.Attribution {
	return credits.Attribution{RequestID: n.id, KeyPath: []string{"key_1"}}
}
func (n *naming) Charged(micro int64) { n.charged += micro }
func (n *naming) NameCharge() credits.ChargeName {
	if n.named.RequestID == "" {
		n.named = credits.ChargeName{RequestID: n.id, AtMilli: time.Now().UnixMilli()}
	}
	return n.named
}
func (n *naming) Owe(micro int64, name credits.ChargeName) {
	if n.owed == nil {
		n.owed = map[credits.ChargeName]int64{}
	}
	n.owed[name] += micro
}

// A retry that finds the send an earlier attempt of its call created owes
// the send's credit hold to that attempt's audit event, named when the
// hold was taken, and charges none of it to its own: written by the
// attempt, by the retry, or by both, the event is one and the charge is
// audited once.
func TestARetryOwesItsEarlierAttemptsSendHoldToThatAttemptsEvent(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			fx := outboxEnv(t, b)
			ctx := context.Background()
			q, err := fx.s.QuoteTransaction(ctx, fx.sc, fx.w.ID, TxQuoteRequest{ChainID: devchain.ChainID,
				To: "0x00000000000000000000000000000000000c0ffe", Asset: "ETH", Amount: "1000"})
			if err != nil {
				t.Fatal(err)
			}
			first, retry := &naming{id: "req_first"}, &naming{id: "req_retry"}
			sent, _, err := fx.s.CreateTransaction(credits.WithRequest(ctx, first), fx.sc, fx.w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1")
			if err != nil {
				t.Fatal(err)
			}
			again, replayed, err := fx.s.CreateTransaction(credits.WithRequest(ctx, retry), fx.sc, fx.w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1")
			if err != nil || !replayed || again.ID != sent.ID {
				t.Fatalf("retry: %+v %v %v", again, replayed, err)
			}
			if first.charged != 100_000 || first.named.RequestID == "" {
				t.Fatalf("the first attempt charged %d under %+v; want the hold, 100000, on its named event", first.charged, first.named)
			}
			if retry.charged != 0 || len(retry.owed) != 1 || retry.owed[first.named] != 100_000 {
				t.Fatalf("the retry charged %d and owes %v; want the hold owed to %+v alone", retry.charged, retry.owed, first.named)
			}
		})
	}
}
