package databases_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/archive"
	"platformapi/shared/groups/databases/dbstore"
)

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Publish(_ context.Context, accountID, projectID, event string, data any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, accountID+"/"+projectID+" "+event+" "+data.(*databases.Transfer).Status)
	return nil
}

func message(t *testing.T, transferID string, attempt int) queue.Received {
	b, _ := json.Marshal(databases.Message{AccountID: scope.AccountID, TransferID: transferID})
	return queue.Received{ID: "m", Body: b, Attempts: attempt}
}

func TestTheWorkerFinishesAnExportAndPublishesItOnceAcrossDuplicateDeliveries(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	tr, err := s.CreateTransfer(ctx(), scope, databases.CreateTransferRequest{Direction: "export"})
	if err != nil {
		t.Fatal(err)
	}
	ev := &recorder{}
	w := databases.NewWorker(databases.WorkerConfig{Service: s, Events: ev})
	for range 2 { // SQS delivers at least once
		if err := w.Handle(ctx(), message(t, tr.ID, 1)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := s.GetTransfer(ctx(), scope, tr.ID)
	if got.Status != databases.TransferReady {
		t.Fatalf("%+v", got)
	}
	if len(ev.events) != 1 || ev.events[0] != "acc_1/prj_1 database.transfer.completed ready" {
		t.Fatalf("events %v", ev.events)
	}
}

func TestTheLastFailedAttemptFailsTheTransferAndTellsSo(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "platform.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	files, _ := dbstore.NewEmbedded(t.TempDir(), 1<<20)
	t.Cleanup(func() { files.Close() })
	bucket, _ := fsblob.Open(t.TempDir())
	signer, _ := archive.NewSigner(bytes.Repeat([]byte{7}, 32))
	// No scratch directory: every export attempt fails transiently.
	s := databases.New(st, files, bucket, signer, filepath.Join(t.TempDir(), "missing"), time.Now, databases.DefaultLimits)
	if _, err := s.Provision(ctx(), scope); err != nil {
		t.Fatal(err)
	}
	tr, _ := s.CreateTransfer(ctx(), scope, databases.CreateTransferRequest{Direction: "export"})
	ev := &recorder{}
	w := databases.NewWorker(databases.WorkerConfig{Service: s, Events: ev, MaxAttempts: 3})
	for attempt := 1; attempt <= 2; attempt++ {
		if err := w.Handle(ctx(), message(t, tr.ID, attempt)); err == nil {
			t.Fatalf("attempt %d: a failed attempt must leave the message for a retry", attempt)
		}
	}
	if got, _ := s.GetTransfer(ctx(), scope, tr.ID); got.Status != databases.TransferPreparing || len(ev.events) != 0 {
		t.Fatalf("before the last attempt: %+v %v", got, ev.events)
	}
	if err := w.Handle(ctx(), message(t, tr.ID, 3)); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetTransfer(ctx(), scope, tr.ID)
	if got.Status != databases.TransferFailed || got.Error == "" || len(ev.events) != 1 || ev.events[0] != "acc_1/prj_1 database.transfer.failed failed" {
		t.Fatalf("after the last attempt: %+v %v", got, ev.events)
	}
}
