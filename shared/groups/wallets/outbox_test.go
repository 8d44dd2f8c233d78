package wallets

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/groups/wallets/policy"
	"platformapi/shared/groups/wallets/wallettest"
)

// faultMode is what becomes of the next matching transaction.
type faultMode int

const (
	noFault faultMode = iota
	// abort fails it before anything is written.
	abort
	// killAfterCommit commits it and then fails, as a process killed
	// before its answer (and before its dispatch) does.
	killAfterCommit
)

// faulty fails the next transaction that has a member match, as armed.
type faulty struct {
	store.Store
	mu    sync.Mutex
	mode  faultMode
	match func(store.Op) bool
}

func (f *faulty) arm(m faultMode, match func(store.Op) bool) {
	f.mu.Lock()
	f.mode, f.match = m, match
	f.mu.Unlock()
}

func (f *faulty) Transact(ctx context.Context, ops []store.Op) error {
	f.mu.Lock()
	mode := noFault
	for _, op := range ops {
		if f.match != nil && f.match(op) {
			mode, f.mode, f.match = f.mode, noFault, nil
			break
		}
	}
	f.mu.Unlock()
	if mode == abort {
		return errors.New("aborted before the commit")
	}
	err := f.Store.Transact(ctx, ops)
	if mode == killAfterCommit && err == nil {
		return errors.New("killed after the commit")
	}
	return err
}

// putsTx matches the write of a wallet transaction in status.
func putsTx(status string) func(store.Op) bool {
	return func(op store.Op) bool {
		return op.Kind == store.OpPut && strings.HasPrefix(op.Key.SK, "wtx#") && op.Item.String("status") == status
	}
}

// usesSigQuote matches the write that records a signature on its quote.
func usesSigQuote(op store.Op) bool {
	return op.Kind == store.OpUpdate && strings.HasPrefix(op.Key.SK, "wsq#")
}

// putsApproval matches the write that creates an approval.
func putsApproval(op store.Op) bool {
	return op.Kind == store.OpPut && strings.HasPrefix(op.Key.SK, "apr#")
}

type outboxFixture struct {
	s   *Service
	dev *devchain.Chain
	st  store.Store
	f   *faulty
	out *wallettest.Outbox
	sc  Scope
	w   *Wallet
}

// outboxEnv is a service on b with a recording outbox over a faulty store,
// a fresh local chain and a funded wallet.
func outboxEnv(t *testing.T, b teststores.Backend) *outboxFixture {
	t.Helper()
	env := wallettest.Open(t, b)
	fx := &outboxFixture{dev: env.Chain, st: env.Store, f: &faulty{Store: env.Store}, out: &wallettest.Outbox{}, sc: Scope{AccountID: wallettest.AccountID}}
	fx.s = New(Config{Store: fx.f, Sealer: env.Sealer, Networks: env.Networks, PriceMicro: 100_000, Outbox: fx.out})
	var err error
	if fx.w, err = fx.s.Create(context.Background(), fx.sc, WalletCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	env.Fund(t, fx.w.Address)
	return fx
}

// events are the recorded events named event.
func (fx *outboxFixture) events(t *testing.T, event string) int {
	t.Helper()
	return wallettest.Events(t, fx.st, event)
}

// A send's wallet.transaction.queued event commits with the send: a send
// that fails to commit leaves none, one whose process dies after the
// commit (its fan-out never run) leaves exactly one for the outbox sweep,
// and the retry that replays it adds none.
func TestASendsEventExistsExactlyWhenTheSendDoes(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			fx := outboxEnv(t, b)
			ctx := context.Background()
			q, err := fx.s.QuoteTransaction(ctx, fx.sc, fx.w.ID, TxQuoteRequest{ChainID: devchain.ChainID,
				To: "0x00000000000000000000000000000000000c0ffe", Asset: "USDC", Amount: "1000000"})
			if err != nil {
				t.Fatal(err)
			}
			fx.f.arm(abort, putsTx(StatusQueued))
			if _, _, err := fx.s.CreateTransaction(ctx, fx.sc, fx.w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1"); err == nil {
				t.Fatal("the aborted send answered")
			}
			if n := fx.events(t, "wallet.transaction.queued"); n != 0 {
				t.Fatalf("an aborted send left %d events", n)
			}
			fx.f.arm(killAfterCommit, putsTx(StatusQueued))
			if _, _, err := fx.s.CreateTransaction(ctx, fx.sc, fx.w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1"); err == nil {
				t.Fatal("the killed send answered")
			}
			if n, d := fx.events(t, "wallet.transaction.queued"), fx.out.Dispatched.Load(); n != 1 || d != 0 {
				t.Fatalf("%d queued events, %d dispatched; want the one committed with the send, left to the sweep", n, d)
			}
			again, replayed, err := fx.s.CreateTransaction(ctx, fx.sc, fx.w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1")
			if err != nil || !replayed {
				t.Fatalf("retry: %+v %v %v", again, replayed, err)
			}
			if n := fx.events(t, "wallet.transaction.queued"); n != 1 {
				t.Fatalf("%d queued events after the replay; want the one committed with the send", n)
			}
		})
	}
}

// A transaction's change of status commits with its event: a transition
// that fails to commit leaves none, one whose process dies after the
// commit leaves exactly one, and advancing the transaction further adds
// none for that status.
func TestATransitionsEventExistsExactlyWhenTheTransitionDoes(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			fx := outboxEnv(t, b)
			ctx := context.Background()
			q, err := fx.s.QuoteTransaction(ctx, fx.sc, fx.w.ID, TxQuoteRequest{ChainID: devchain.ChainID,
				To: "0x00000000000000000000000000000000000c0ffe", Asset: "USDC", Amount: "1000000"})
			if err != nil {
				t.Fatal(err)
			}
			tx, _, err := fx.s.CreateTransaction(ctx, fx.sc, fx.w.ID, TxCreateRequest{QuoteID: q.ID}, "key_1", "call-1")
			if err != nil {
				t.Fatal(err)
			}
			fx.f.arm(abort, putsTx(StatusSubmitted))
			_, _ = fx.s.Advance(ctx, fx.sc, fx.w.ID, tx.ID)
			if n := fx.events(t, "wallet.transaction.submitted"); n != 0 {
				t.Fatalf("an aborted transition left %d events", n)
			}
			if v, err := fx.s.PeekTransaction(ctx, fx.sc, fx.w.ID, tx.ID); err != nil || v.Status != StatusQueued {
				t.Fatalf("after the aborted transition: %+v %v", v, err)
			}
			fx.f.arm(killAfterCommit, putsTx(StatusSubmitted))
			_, _ = fx.s.Advance(ctx, fx.sc, fx.w.ID, tx.ID)
			if v, err := fx.s.PeekTransaction(ctx, fx.sc, fx.w.ID, tx.ID); err != nil || v.Status == StatusQueued {
				t.Fatalf("the killed transition did not commit: %+v %v", v, err)
			}
			if n, d := fx.events(t, "wallet.transaction.submitted"), fx.out.Dispatched.Load(); n != 1 || d != 1 {
				t.Fatalf("%d submitted events, %d dispatched; want the one committed with the transition, left to the sweep", n, d)
			}
			done := settleAll(t, fx.s, fx.sc, fx.w.ID, tx.ID)
			if done.Status != StatusConfirmed {
				t.Fatalf("%+v", done)
			}
			if s, c := fx.events(t, "wallet.transaction.submitted"), fx.events(t, "wallet.transaction.confirmed"); s != 1 || c != 1 {
				t.Fatalf("%d submitted and %d confirmed events; want one each", s, c)
			}
		})
	}
}

// A signature's wallet.signature.created event commits with the
// signature: a signature that fails to commit leaves none, one whose
// process dies after the commit leaves exactly one, and the retry that
// replays the signature adds none.
func TestASignaturesEventExistsExactlyWhenTheSignatureDoes(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			fx := outboxEnv(t, b)
			ctx := context.Background()
			if _, err := fx.s.UpdatePolicy(ctx, fx.sc, fx.w.ID, WalletPolicyRequest{DefaultAction: policy.ActionAllow,
				ExpectedRevision: fx.w.Policy.Revision}); err != nil {
				t.Fatal(err)
			}
			msg := "hello"
			q, err := fx.s.QuoteSignature(ctx, fx.sc, fx.w.ID, SigQuoteRequest{Type: "personal_sign", Message: &msg}, "key_1")
			if err != nil {
				t.Fatal(err)
			}
			fx.f.arm(abort, usesSigQuote)
			if _, err := fx.s.CreateSignature(ctx, fx.sc, fx.w.ID, SigCreateRequest{QuoteID: q.ID}, "call-1"); err == nil {
				t.Fatal("the aborted signature answered")
			}
			if n := fx.events(t, "wallet.signature.created"); n != 0 {
				t.Fatalf("an aborted signature left %d events", n)
			}
			fx.f.arm(killAfterCommit, usesSigQuote)
			if _, err := fx.s.CreateSignature(ctx, fx.sc, fx.w.ID, SigCreateRequest{QuoteID: q.ID}, "call-1"); err == nil {
				t.Fatal("the killed signature answered")
			}
			sig, err := fx.s.CreateSignature(ctx, fx.sc, fx.w.ID, SigCreateRequest{QuoteID: q.ID}, "call-1")
			if err != nil || sig.Signature == "" {
				t.Fatalf("retry: %+v %v", sig, err)
			}
			if n, d := fx.events(t, "wallet.signature.created"), fx.out.Dispatched.Load(); n != 1 || d != 0 {
				t.Fatalf("%d signature events, %d dispatched; want the one committed with the signature, left to the sweep", n, d)
			}
		})
	}
}

// An approval a wallet's policy requests commits with its
// approval.requested event: a request that fails to commit leaves neither,
// one whose process dies after the commit leaves the approval and exactly
// one event.
func TestAnApprovalsRequestedEventExistsExactlyWhenTheApprovalDoes(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			fx := outboxEnv(t, b)
			ctx := context.Background()
			if _, err := fx.s.UpdatePolicy(ctx, fx.sc, fx.w.ID, WalletPolicyRequest{DefaultAction: policy.ActionRequireApproval,
				ExpectedRevision: fx.w.Policy.Revision}); err != nil {
				t.Fatal(err)
			}
			msg := "hello"
			approvalsNow := func() int {
				list, _, err := fx.s.approvals.List(ctx, fx.sc.AccountID, "", "", 100, "")
				if err != nil {
					t.Fatal(err)
				}
				return len(list)
			}
			fx.f.arm(abort, putsApproval)
			if _, err := fx.s.QuoteSignature(ctx, fx.sc, fx.w.ID, SigQuoteRequest{Type: "personal_sign", Message: &msg}, "key_1"); err == nil {
				t.Fatal("the aborted request answered")
			}
			if n, a := fx.events(t, "approval.requested"), approvalsNow(); n != 0 || a != 0 {
				t.Fatalf("an aborted request left %d events and %d approvals", n, a)
			}
			fx.f.arm(killAfterCommit, putsApproval)
			if _, err := fx.s.QuoteSignature(ctx, fx.sc, fx.w.ID, SigQuoteRequest{Type: "personal_sign", Message: &msg}, "key_1"); err == nil ||
				!strings.Contains(err.Error(), "killed") {
				t.Fatalf("the killed request answered %v", err)
			}
			if n, a, d := fx.events(t, "approval.requested"), approvalsNow(), fx.out.Dispatched.Load(); n != 1 || a != 1 || d != 0 {
				t.Fatalf("%d events, %d approvals, %d dispatched; want the approval and its one event, left to the sweep", n, a, d)
			}
		})
	}
}
