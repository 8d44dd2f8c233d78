package runs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/emf/emftest"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/runs"
	"platformapi/shared/groups/services/superbrain"
)

func TestRunExecutesOnceAlthoughDeliveredTwice(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		k := h.account(1, keys.CreateKeyRequest{})
		h.remember(k, "the cat sat on the mat", "a dog and a cat")
		before := h.balance(k)
		run := h.search(k, "cat")
		// SQS delivers at least once: a second copy of the message, and
		// each copy handed to its own consumer at the same time.
		body, _ := json.Marshal(runs.Message{AccountID: k.AccountID, RunID: run.ID})
		if err := h.q.Send(h.ctx, queue.Message{Body: body}); err != nil {
			t.Fatal(err)
		}
		ms := h.receive()
		if len(ms) != 2 {
			t.Fatalf("%d messages, want 2", len(ms))
		}
		var wg sync.WaitGroup
		errs := make([]error, len(ms))
		for i, m := range ms {
			wg.Go(func() { errs[i] = h.worker.Handle(h.ctx, m) })
		}
		wg.Wait()
		// The copy that loses may see the run already claimed and ask to be
		// left in the queue (ErrInProgress) rather than deleted; either way it
		// does not execute.
		for _, err := range errs {
			if err != nil && !errors.Is(err, runs.ErrInProgress) {
				t.Fatalf("handle: %v", err)
			}
		}
		// And the same delivery again, after the run finished.
		if err := h.worker.Handle(h.ctx, ms[0]); err != nil {
			t.Fatal(err)
		}
		got := h.get(k, run.ID)
		if got.Status != runs.StatusSucceeded || got.Attempts != 1 || h.svc.executions() != 1 {
			t.Fatalf("status %s, attempts %d, executions %d; want succeeded, 1, 1", got.Status, got.Attempts, h.svc.executions())
		}
		if want := searchCharge(2); got.ChargedMicro != want || before-h.balance(k) != want {
			t.Errorf("charged %d, balance moved by %d; want exactly %d", got.ChargedMicro, before-h.balance(k), want)
		}
	})
}

func TestSucceededRunKeepsItsOutputAsArtifact(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		k := h.account(1, keys.CreateKeyRequest{})
		h.remember(k, "durable runs keep artifacts")
		run := h.search(k, "artifacts")
		h.settle()
		got := h.get(k, run.ID)
		if got.Status != runs.StatusSucceeded || len(got.ArtifactIDs) != 1 || got.FinishedAt == nil || got.StartedAt == nil {
			t.Fatalf("run %+v", got)
		}
		v := runs.Viewer{AccountID: k.AccountID, AllowsService: everyService}
		rc, art, err := h.repo.OpenArtifact(h.ctx, v, got.ArtifactIDs[0])
		if err != nil {
			t.Fatal(err)
		}
		content, _ := io.ReadAll(rc)
		rc.Close()
		sum := sha256.Sum256(content)
		if art.RunID != run.ID || art.ContentType != "application/json" || art.SHA256 != hex.EncodeToString(sum[:]) || art.SizeBytes != int64(len(content)) {
			t.Errorf("artifact %+v for %d bytes", art, len(content))
		}
		if string(content) != string(got.Result) {
			t.Errorf("artifact %s, result %s: the artifact is the output", content, got.Result)
		}
		list, _, err := h.repo.ListArtifacts(h.ctx, v, run.ID, 10, "")
		if err != nil || len(list) != 1 || list[0].ID != art.ID {
			t.Errorf("artifacts of the run: %v %v", list, err)
		}
	})
}

// Each case is a run that must end failed with code, without reaching the
// service and without moving the balance.
func TestRunFailsUnchargedWhenItCannotExecute(t *testing.T) {
	cases := []struct {
		name    string
		credits float64
		code    string
		// before runs between creation and delivery; it returns the key the
		// run is created with.
		setup func(h *harness, root *keys.Key) *keys.Key
		then  func(h *harness, root, creator *keys.Key)
	}{
		{name: "insufficient credits", credits: 0.01, code: "insufficient_credits"},
		{name: "creator key revoked", credits: 1, code: "key_revoked",
			setup: func(h *harness, root *keys.Key) *keys.Key { return h.child(root, keys.CreateKeyRequest{}) },
			then: func(h *harness, root, creator *keys.Key) {
				if _, err := h.keys.Revoke(h.ctx, root, creator.ID); err != nil {
					h.t.Fatal(err)
				}
			}},
		{name: "ancestor of creator revoked", credits: 1, code: "key_revoked",
			setup: func(h *harness, root *keys.Key) *keys.Key { return h.child(root, keys.CreateKeyRequest{}) },
			then: func(h *harness, root, _ *keys.Key) {
				if _, err := h.keys.Revoke(h.ctx, root, root.ID); err != nil {
					h.t.Fatal(err)
				}
			}},
		{name: "creator key expired", credits: 1, code: "key_expired",
			setup: func(h *harness, root *keys.Key) *keys.Key {
				exp := h.clock.Now().Add(time.Hour)
				return h.child(root, keys.CreateKeyRequest{ExpiresAt: &exp})
			},
			then: func(h *harness, _, _ *keys.Key) { h.clock.Advance(2 * time.Hour) }},
		{name: "runs.create creditsPerDay exhausted", credits: 1, code: "limit_exceeded",
			setup: func(h *harness, root *keys.Key) *keys.Key {
				day := 0.01 // below the search's price, which is what is reserved
				return h.child(root, keys.CreateKeyRequest{Limits: limits.Set{"runs.create.cloud-superbrain": {CreditsPerDay: &day}}})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, h *harness) {
				root := h.account(tc.credits, keys.CreateKeyRequest{})
				creator := root
				if tc.setup != nil {
					creator = tc.setup(h, root)
				}
				before := h.balance(root)
				run := h.search(creator, "anything")
				if tc.then != nil {
					tc.then(h, root, creator)
				}
				h.settle()
				got := h.get(root, run.ID)
				if got.Status != runs.StatusFailed || got.Error == nil || got.Error.Code != tc.code {
					t.Fatalf("status %s, error %+v; want failed %s", got.Status, got.Error, tc.code)
				}
				if got.ChargedMicro != 0 || h.balance(root) != before || h.svc.executions() != 0 {
					t.Errorf("charged %d, balance %d → %d, executions %d; want nothing", got.ChargedMicro, before, h.balance(root), h.svc.executions())
				}
			})
		})
	}
}

func TestServicesInvokeLimitsDoNotApplyToRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		root := h.account(1, keys.CreateKeyRequest{})
		none := 0.0
		k := h.child(root, keys.CreateKeyRequest{Limits: limits.Set{"services.invoke.cloud-superbrain": {CreditsPerDay: &none}}})
		run := h.search(k, "anything")
		h.settle()
		if got := h.get(root, run.ID); got.Status != runs.StatusSucceeded {
			t.Fatalf("status %s, error %+v: a run counts against runs.create selectors only", got.Status, got.Error)
		}
	})
}

func TestCancelledRunNeverExecutes(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		k := h.account(1, keys.CreateKeyRequest{})
		before := h.balance(k)
		run := h.search(k, "anything")
		v := runs.Viewer{AccountID: k.AccountID, AllowsService: everyService}
		got, err := h.repo.Cancel(h.ctx, v, run.ID)
		if err != nil || got.Status != runs.StatusCancelled || got.CancelRequestedAt == nil {
			t.Fatalf("cancel: %+v %v", got, err)
		}
		h.settle()
		got = h.get(k, run.ID)
		if got.Status != runs.StatusCancelled || got.Attempts != 0 || h.svc.executions() != 0 || h.balance(k) != before {
			t.Fatalf("status %s, attempts %d, executions %d, balance moved %d", got.Status, got.Attempts, h.svc.executions(), before-h.balance(k))
		}
		if again, err := h.repo.Cancel(h.ctx, v, run.ID); err != nil || again.Status != runs.StatusCancelled {
			t.Errorf("cancelling a cancelled run changes nothing: %+v %v", again, err)
		}
	})
}

func TestFinishedRunCannotBeCancelled(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		k := h.account(1, keys.CreateKeyRequest{})
		run := h.search(k, "anything")
		h.settle()
		_, err := h.repo.Cancel(h.ctx, runs.Viewer{AccountID: k.AccountID, AllowsService: everyService}, run.ID)
		if code(err) != "conflict" {
			t.Fatalf("cancel a succeeded run: %v, want conflict", err)
		}
	})
}

func TestTransientFailureIsRetriedUpToTheBound(t *testing.T) {
	unavailable := &upstream.UnavailableError{RetryAfter: time.Second}
	limited := &upstream.RateLimitedError{RetryAfter: time.Second}
	cases := []struct {
		name     string
		script   []error
		status   string
		code     string
		attempts int
		charged  bool
	}{
		{name: "503 then success", script: []error{unavailable}, status: runs.StatusSucceeded, attempts: 2, charged: true},
		{name: "429 twice then success", script: []error{limited, limited}, status: runs.StatusSucceeded, attempts: 3, charged: true},
		{name: "503 on every attempt", script: []error{unavailable, unavailable, unavailable}, status: runs.StatusFailed, code: "service_unavailable", attempts: runs.DefaultMaxAttempts},
		{name: "429 on every attempt", script: []error{limited, limited, limited}, status: runs.StatusFailed, code: "upstream_rate_limited", attempts: runs.DefaultMaxAttempts},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, h *harness) {
				k := h.account(1, keys.CreateKeyRequest{})
				before := h.balance(k)
				h.svc.script = tc.script
				run := h.search(k, "anything")
				h.settle()
				got := h.get(k, run.ID)
				if got.Status != tc.status || got.Attempts != tc.attempts || tc.code != "" && (got.Error == nil || got.Error.Code != tc.code) {
					t.Fatalf("status %s, attempts %d, error %+v; want %s, %d, %s", got.Status, got.Attempts, got.Error, tc.status, tc.attempts, tc.code)
				}
				if moved := before - h.balance(k); tc.charged != (moved > 0) || moved != got.ChargedMicro {
					t.Errorf("balance moved %d, run charged %d", moved, got.ChargedMicro)
				}
			})
		})
	}
}

func TestRetryWaitsQueuedWithItsNextAttemptTime(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		k := h.account(1, keys.CreateKeyRequest{})
		h.svc.script = []error{&upstream.UnavailableError{RetryAfter: time.Second}}
		run := h.search(k, "anything")
		errs, _ := h.deliver()
		if len(errs) != 1 || !errors.Is(errs[0], runs.ErrRetry) {
			t.Fatalf("handle: %v, want ErrRetry", errs)
		}
		got := h.get(k, run.ID)
		if got.Status != runs.StatusQueued || got.NextAttemptAt == nil || got.Attempts != 1 || got.Error != nil {
			t.Fatalf("after a transient failure: %+v", got)
		}
	})
}

func TestCancelRequestedWhileRunningStopsRetries(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		k := h.account(1, keys.CreateKeyRequest{})
		h.svc.gate = make(chan struct{})
		run := h.search(k, "anything")
		ms := h.receive()
		done := make(chan error, 1)
		go func() { done <- h.worker.Handle(h.ctx, ms[0]) }()
		waitFor(t, func() bool { return h.svc.executions() == 1 })
		got, err := h.repo.Cancel(h.ctx, runs.Viewer{AccountID: k.AccountID, AllowsService: everyService}, run.ID)
		if err != nil || got.Status != runs.StatusRunning || got.CancelRequestedAt == nil {
			t.Fatalf("cancel a running run: %+v %v", got, err)
		}
		// The running attempt ends in a transient failure: not retried.
		h.svc.real = failing{&upstream.UnavailableError{RetryAfter: time.Second}}
		close(h.svc.gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := h.get(k, run.ID); got.Status != runs.StatusCancelled || got.Attempts != 1 {
			t.Fatalf("status %s, attempts %d; want cancelled after its one attempt", got.Status, got.Attempts)
		}
	})
}

// failing answers every call with err.
type failing struct{ err error }

func (f failing) Invoke(context.Context, upstream.Request) (upstream.Result, error) {
	return upstream.Result{}, f.err
}

func TestInterruptedRunIsNeverExecutedAgain(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		k := h.account(1, keys.CreateKeyRequest{})
		h.svc.gate = make(chan struct{})
		run := h.search(k, "anything")
		first := h.receive()[0]
		done := make(chan error, 1)
		go func() { done <- h.worker.Handle(h.ctx, first) }()
		waitFor(t, func() bool { return h.svc.executions() == 1 })
		// A second delivery while the attempt is live leaves it alone.
		if err := h.worker.Handle(h.ctx, first); !errors.Is(err, runs.ErrInProgress) {
			t.Fatalf("second delivery during the attempt: %v, want ErrInProgress", err)
		}
		// Past the attempt's lease its worker is presumed dead.
		h.clock.Advance(attemptTimeout + 2*time.Minute)
		if err := h.worker.Handle(h.ctx, first); err != nil {
			t.Fatal(err)
		}
		got := h.get(k, run.ID)
		if got.Status != runs.StatusFailed || got.Error == nil || got.Error.Code != runs.CodeInterrupted {
			t.Fatalf("status %s, error %+v; want failed %s", got.Status, got.Error, runs.CodeInterrupted)
		}
		// The presumed-dead attempt finishes after all: it changes nothing.
		close(h.svc.gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if again := h.get(k, run.ID); again.Status != runs.StatusFailed || h.svc.executions() != 1 {
			t.Fatalf("status %s, executions %d", again.Status, h.svc.executions())
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("condition not reached")
}

// code is the catalogue code of err, or "".
func code(err error) string {
	var e *apierr.Error
	if errors.As(err, &e) {
		return string(e.Code)
	}
	return ""
}

// Every stored end of an attempt is a CloudWatch metric on its log line
// (EMF): retries, successes with the credits they charged, failures with
// their code as a property.
func TestEveryAttemptOutcomeIsAMetricLine(t *testing.T) {
	unavailable := &upstream.UnavailableError{RetryAfter: time.Second}
	for name, tc := range map[string]struct {
		script []error
		want   map[string]int64 // ChargedMicroCredits: -1 stands for the run's charge
	}{
		"retried then succeeded": {[]error{unavailable}, map[string]int64{"RunRetries": 1, "RunsSucceeded": 1, "ChargedMicroCredits": -1}},
		"failed after retries":   {[]error{unavailable, unavailable, unavailable}, map[string]int64{"RunRetries": int64(runs.DefaultMaxAttempts - 1), "RunsFailed": 1}},
	} {
		t.Run(name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, h *harness) {
				k := h.account(1, keys.CreateKeyRequest{})
				h.svc.script = tc.script
				run := h.search(k, "anything")
				h.settle()
				got := h.get(k, run.ID)
				want := maps.Clone(tc.want)
				if want["ChargedMicroCredits"] == -1 {
					want["ChargedMicroCredits"] = got.ChargedMicro
				}
				counted := map[string]int64{}
				for _, line := range emftest.Lines(t, h.logs.String()) {
					if line["Worker"] != "runs" || line["runId"] != run.ID {
						t.Fatalf("line %v", line)
					}
					if line["status"] == runs.StatusFailed && line["code"] != "service_unavailable" {
						t.Fatalf("failure line without its code: %v", line)
					}
					for m := range emftest.Metrics(line) {
						counted[m] += int64(line[m].(float64))
					}
				}
				if !maps.Equal(counted, want) {
					t.Fatalf("metrics %v, want %v", counted, want)
				}
			})
		})
	}
}

// TestARetriedCreateFindsItsRunAndSendsItAgain: a process that died after
// writing a run but before sending its message left it queued with no
// message; the retry with the same call id returns that run, not a second
// one, and sends its message, so it executes once.
func TestARetriedCreateFindsItsRunAndSendsItAgain(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		k := h.account(1, keys.CreateKeyRequest{})
		n := runs.NewRun{AccountID: k.AccountID, KeyID: k.ID, ServiceID: superbrain.ServiceID,
			OperationID: superbrain.OpSearch, Input: json.RawMessage(`{"query":"cat"}`), CallID: "call-1"}
		first, err := h.repo.Create(h.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range h.receive() { // the message the crash lost
			if err := h.q.Delete(h.ctx, m.Receipt); err != nil {
				t.Fatal(err)
			}
		}
		again, err := h.repo.Create(h.ctx, n)
		if err != nil || again.ID != first.ID {
			t.Fatalf("retry created %v (%v); want run %s", again, err, first.ID)
		}
		ms := h.receive()
		if len(ms) != 1 {
			t.Fatalf("%d messages after the retry; want 1", len(ms))
		}
		if err := h.worker.Handle(h.ctx, ms[0]); err != nil {
			t.Fatal(err)
		}
		if got := h.get(k, first.ID); got.Status != runs.StatusSucceeded || h.svc.executions() != 1 {
			t.Fatalf("status %s after %d executions; want succeeded once", got.Status, h.svc.executions())
		}
		if late, err := h.repo.Create(h.ctx, n); err != nil || late.ID != first.ID || len(h.receive()) != 0 {
			t.Fatalf("a retry after the run finished: %v %v; want run %s and no message", late, err, first.ID)
		}
		page, _, err := h.repo.List(h.ctx, runs.Viewer{AccountID: k.AccountID, AllowsService: everyService}, "", 10, "")
		if err != nil || len(page) != 1 {
			t.Fatalf("%d runs listed (%v); want 1", len(page), err)
		}
	})
}
