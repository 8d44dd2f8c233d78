package work_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/memqueue"
	"platformapi/shared/adapters/testkit/testlog"
	"platformapi/shared/adapters/work"
)

// A pass runs at once (a restarted process catches up before its first
// tick), then again each tick; a failing pass is logged and tried again.
func TestAPassRunsAtStartAndAgainAfterAFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var logs testlog.Buffer
	var mu sync.Mutex
	calls := 0
	third := make(chan struct{})
	pass := work.Pass{Name: "sweeper", Every: time.Millisecond, Run: func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 3 {
			close(third)
		}
		if calls == 1 {
			return errors.New("storage unavailable")
		}
		return nil
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		work.Run(ctx, slog.New(slog.NewJSONHandler(&logs, nil)), nil, []work.Pass{pass})
	}()
	<-third
	cancel()
	<-done
	if out := logs.String(); !strings.Contains(out, `"worker":"sweeper"`) || !strings.Contains(out, "storage unavailable") {
		t.Fatalf("the failed pass was not logged with its name: %s", out)
	}
}

// Run returns only once each worker has finished the batch it holds, and
// deletes what the worker handled: a stopping process leaves no work half
// recorded, and loses none.
func TestRunFinishesTheBatchItHoldsBeforeItReturns(t *testing.T) {
	q := memqueue.New()
	defer q.Close()
	if err := q.Send(context.Background(), queue.Message{Body: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	received, finished := make(chan struct{}), make(chan struct{})
	w := work.Worker{Name: "w", Queue: q, Batch: 1, Visibility: time.Hour, Handle: func(hctx context.Context, ms []queue.Received) []string {
		close(received)
		<-ctx.Done() // the process is stopping while the message is handled
		if hctx.Err() != nil {
			t.Error("the batch's context was cancelled with the process's")
		}
		close(finished)
		return nil
	}}
	// A worker without a queue (a deployment that has none) is skipped.
	idle := work.Worker{Name: "idle", Handle: func(context.Context, []queue.Received) []string { t.Error("a worker without a queue ran"); return nil }}
	done := make(chan struct{})
	go func() { defer close(done); work.Run(ctx, slog.New(slog.DiscardHandler), []work.Worker{idle, w}, nil) }()
	<-received
	cancel()
	<-done
	select {
	case <-finished:
	default:
		t.Fatal("Run returned before the worker finished its batch")
	}
	left, err := q.Receive(context.Background(), 10, time.Hour, 0)
	if err != nil || len(left) != 0 {
		t.Fatalf("the handled message is still queued: %v %v", left, err)
	}
}
