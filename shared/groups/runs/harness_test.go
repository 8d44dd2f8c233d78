package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/memqueue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/testlog"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/runs"
	"platformapi/shared/groups/services/superbrain"
)

// service is the real cloud-superbrain behind a script: the first calls get
// the scripted errors, the others reach the service, which counts them. With
// a gate, a call that reaches the service first waits for the gate.
type service struct {
	mu     sync.Mutex
	real   upstream.Invoker
	script []error
	gate   chan struct{}
	calls  int
}

func (s *service) Invoke(ctx context.Context, r upstream.Request) (upstream.Result, error) {
	s.mu.Lock()
	if len(s.script) > 0 {
		err := s.script[0]
		s.script = s.script[1:]
		s.mu.Unlock()
		return upstream.Result{}, err
	}
	s.calls++
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return s.real.Invoke(ctx, r)
}

// executions is how many calls reached the service.
func (s *service) executions() int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls }

// harness is the runs domain and its worker on one fresh store, with an
// in-process queue and a directory bucket.
type harness struct {
	t      *testing.T
	ctx    context.Context
	clock  *testclock.Clock
	st     store.Store
	q      *memqueue.Queue
	keys   *keys.Repo
	ledger *credits.Ledger
	repo   *runs.Repo
	worker *runs.Worker
	svc    *service
	logs   *testlog.Buffer // the worker's JSON log
}

const attemptTimeout = 10 * time.Second

// eachBackend runs test on every storage backend this run can reach.
func eachBackend(t *testing.T, test func(t *testing.T, h *harness)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			c := testclock.New(time.Now().UTC().Truncate(time.Second))
			st := b.Open(t, c.Now)
			bucket, err := fsblob.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			q := memqueue.New()
			t.Cleanup(func() { q.Close() })
			cfg := runs.Config{Store: st, Queue: q, Artifacts: bucket, Now: c.Now}
			svc := &service{real: superbrain.New(st, c.Now)}
			logs := &testlog.Buffer{}
			w := runs.NewWorker(runs.WorkerConfig{Config: cfg, Services: upstream.Router{superbrain.ServiceID: svc},
				Timeout: attemptTimeout, Backoff: func(int, time.Duration) time.Duration { return time.Millisecond },
				Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			test(t, &harness{t: t, ctx: context.Background(), clock: c, st: st, q: q, keys: keys.NewRepo(st, c.Now),
				ledger: credits.NewLedger(st, c.Now), repo: runs.NewRepo(cfg), worker: w, svc: svc, logs: logs})
		})
	}
}

func micro(credits float64) int64 { return int64(math.Round(credits * catalog.MicroPerCredit)) }

// account opens an account funded with credits and returns its root key.
func (h *harness) account(credits float64, req keys.CreateKeyRequest) *keys.Key {
	h.t.Helper()
	c, err := h.keys.CreateAccount(h.ctx, credittoken.Claims{ID: ids.New("ctk", h.clock.Now()), CreditsMicro: micro(credits),
		ExpiresAt: h.clock.Now().Add(time.Hour).Unix()}, req)
	if err != nil {
		h.t.Fatal(err)
	}
	return c.Key
}

// child creates a key under parent (parent being a root key).
func (h *harness) child(parent *keys.Key, req keys.CreateKeyRequest) *keys.Key {
	h.t.Helper()
	c, err := h.keys.CreateChild(h.ctx, []*keys.Key{parent}, req, func(string) bool { return true })
	if err != nil {
		h.t.Fatal(err)
	}
	return c.Key
}

// remember writes memories for k's account straight into the service
// (uncharged), so that searches find them.
func (h *harness) remember(k *keys.Key, texts ...string) {
	h.t.Helper()
	for _, text := range texts {
		in, _ := json.Marshal(map[string]string{"text": text})
		_, err := superbrain.New(h.st, h.clock.Now).Invoke(h.ctx, upstream.Request{ServiceID: superbrain.ServiceID, OperationID: superbrain.OpWrite,
			Input: in, AccountID: k.AccountID, MaxChargeMicro: micro(0.01)})
		if err != nil {
			h.t.Fatal(err)
		}
	}
}

// search creates a durable memory.search run on k's authority.
func (h *harness) search(k *keys.Key, query string) *runs.Run {
	h.t.Helper()
	in, _ := json.Marshal(map[string]string{"query": query})
	run, err := h.repo.Create(h.ctx, runs.NewRun{AccountID: k.AccountID, KeyID: k.ID, ServiceID: superbrain.ServiceID,
		OperationID: superbrain.OpSearch, Input: in})
	if err != nil {
		h.t.Fatal(err)
	}
	return run
}

// receive takes every message visible now.
func (h *harness) receive() []queue.Received {
	h.t.Helper()
	var out []queue.Received
	for {
		ms, err := h.q.Receive(h.ctx, 10, time.Minute, 0)
		if err != nil {
			h.t.Fatal(err)
		}
		if len(ms) == 0 {
			return out
		}
		out = append(out, ms...)
	}
}

// deliver hands every visible message to the worker, as the worker loop
// does, deleting those it is done with; it returns Handle's errors and how
// many messages it handled.
func (h *harness) deliver() (errs []error, handled int) {
	h.t.Helper()
	for _, m := range h.receive() {
		handled++
		if err := h.worker.Handle(h.ctx, m); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := h.q.Delete(h.ctx, m.Receipt); err != nil {
			h.t.Fatal(err)
		}
	}
	return errs, handled
}

// settle delivers until nothing is left to deliver, waiting out the
// harness's one-millisecond backoffs.
func (h *harness) settle() {
	h.t.Helper()
	retrying := false
	for range 1000 {
		errs, handled := h.deliver()
		for _, err := range errs {
			if !errors.Is(err, runs.ErrRetry) {
				h.t.Fatalf("handle: %v", err)
			}
		}
		if handled == 0 && !retrying {
			return
		}
		retrying = len(errs) > 0
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatal("the queue did not settle")
}

var everyService = func(string) bool { return true }

// get reads a run at account level.
func (h *harness) get(k *keys.Key, id string) *runs.Run {
	h.t.Helper()
	run, err := h.repo.Get(h.ctx, runs.Viewer{AccountID: k.AccountID, AllowsService: everyService}, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return run
}

func (h *harness) balance(k *keys.Key) int64 {
	h.t.Helper()
	b, err := h.ledger.Balance(h.ctx, k.AccountID)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// searchCharge is cloud-superbrain's exact charge for a search that
// returned n results (superbrain/charges.go).
func searchCharge(n int) int64 { return min(5_000+int64(n)*1_000, micro(0.02)) }
