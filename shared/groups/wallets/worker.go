package wallets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/work"
)

// Queue is the wallets queue. A transaction's step mostly fails for its
// chain's reasons (an RPC endpoint down or rate limiting), which pass, and
// the transaction's own state, not the receive count, decides whether it is
// broadcast again. A waiting receipt is a new, delayed message each time,
// so the oldest message is at most ten receives of one step old (10 x 6
// minutes).
var Queue = work.Queue{Name: "wallets", Env: "WALLETS", Stack: "Wallets", MaxReceives: 10, Consumer: "wallets-worker",
	MaxAge: 2 * time.Hour, Stuck: "the oldest wallet transaction step is older than ten attempts and their visibility timeouts: the wallets worker is not draining the queue",
	DeadLettered: "A wallet transaction's step failed repeatedly and its message waits in the dead-letter queue (wallets-recheck still advances the transaction)."}

// message is a worker's job: advance one transaction.
type message struct {
	AccountID string `json:"a"`
	ProjectID string `json:"p"`
	WalletID  string `json:"w"`
	TxID      string `json:"t"`
}

// enqueue hands t to the worker. A failure is logged only: the open index
// has t, and Recheck finds it.
func (s *Service) enqueue(ctx context.Context, t *txRec, delay time.Duration) {
	if s.q == nil {
		return
	}
	body, _ := json.Marshal(message{AccountID: t.AccountID, ProjectID: t.ProjectID, WalletID: t.WalletID, TxID: t.ID})
	if err := s.q.Send(context.WithoutCancel(ctx), queue.Message{Body: body, Delay: delay}); err != nil {
		s.log.Error("wallets: enqueue", "transaction", t.ID, "error", err.Error())
	}
}

// Advance moves one transaction as far as it goes now and reports whether
// it still needs watching (not final, or a settlement pending).
func (s *Service) Advance(ctx context.Context, sc Scope, walletID, txID string) (bool, error) {
	it, err := s.st.Get(ctx, txKey(sc, walletID, txID))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	t, rev, err := decodeTx(it)
	if err != nil {
		return false, err
	}
	t, err = s.advance(ctx, t, rev)
	return !t.final() || t.Settle != "", err
}

// Worker consumes the wallets queue.
type Worker struct{ s *Service }

// NewWorker is the worker of s's queue.
func NewWorker(s *Service) *Worker { return &Worker{s: s} }

// watchDelay is how soon a submitted transaction is looked at again.
const watchDelay = 2 * time.Second

// maxWatches bounds how long one message keeps re-sending itself; Recheck
// covers a transaction after that.
const maxWatches = 300

// HandleBatch advances each message's transaction; one still in flight is
// sent again with a delay (a new message, so the queue's receive count and
// dead-letter queue stay for real failures). It returns the ids of
// messages to retry.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	return queue.HandleEach(ctx, ms, w.handle, func(error) bool { return false }, w.s.log)
}

type watched struct {
	message
	Watches int `json:"n,omitempty"`
}

func (w *Worker) handle(ctx context.Context, m queue.Received) error {
	var msg watched
	if err := json.Unmarshal(m.Body, &msg); err != nil {
		return nil // not ours to retry: a malformed message can never succeed
	}
	sc := Scope{AccountID: msg.AccountID, ProjectID: msg.ProjectID}
	more, err := w.s.Advance(ctx, sc, msg.WalletID, msg.TxID)
	if err != nil {
		return err
	}
	if !more || msg.Watches >= maxWatches || w.s.q == nil {
		return nil
	}
	it, err := w.s.st.Get(ctx, txKey(sc, msg.WalletID, msg.TxID))
	if err != nil {
		return err
	}
	t, _, err := decodeTx(it)
	if err != nil || t.Status == StatusPendingApproval {
		return err // a person decides when: Recheck and reads look
	}
	msg.Watches++
	body, _ := json.Marshal(msg)
	return w.s.q.Send(ctx, queue.Message{Body: body, Delay: watchDelay})
}

// Work is the worker on q (on Lambda the event source mapping calls
// HandleBatch).
func (w *Worker) Work(q queue.Queue) work.Worker {
	return work.Worker{Name: Queue.Consumer, Queue: q, Handle: w.HandleBatch, Batch: 10, Visibility: time.Minute}
}

// recheckPage is how many open transactions one query of Recheck reads;
// recheckBudget how long a pass may keep reading pages (the scheduled
// function has a minute).
const (
	recheckPage   = 200
	recheckBudget = 40 * time.Second
)

// Recheck advances every transaction not yet final (a decided approval, a
// receipt no message waited for, a settlement a crash left pending): the
// scheduled worker's pass. It goes through the whole open index, page by
// page, so transactions waiting days for a person never starve the ones
// behind them.
func (s *Service) Recheck(ctx context.Context) error {
	var errs []error
	stop := time.Now().Add(recheckBudget)
	after := ""
	for time.Now().Before(stop) {
		pg, err := s.st.Query(ctx, store.Query{PK: "wallets#open", After: after, Limit: recheckPage})
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("wallets: recheck: %w", err))...)
		}
		for _, it := range pg.Items {
			sc := Scope{AccountID: it.String("acct"), ProjectID: it.String("project")}
			if _, err := s.Advance(ctx, sc, it.String("wallet"), it.Key().SK); err != nil {
				errs = append(errs, err)
			}
			after = it.Key().SK
		}
		if !pg.More {
			break
		}
	}
	return errors.Join(errs...)
}
