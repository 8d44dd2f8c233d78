package databases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/work"
)

// Transfer events, published by the worker when a transfer's long work ends.
const (
	EventTransferCompleted = "database.transfer.completed"
	EventTransferFailed    = "database.transfer.failed"
)

// Message is one transfer job on the databases queue: build an export's
// archive or validate and swap in an import.
type Message struct {
	AccountID  string `json:"accountId"`
	TransferID string `json:"transferId"`
}

// Enqueue sends the job of a transfer that CreateTransfer (export) or
// CompleteImport (import) has just recorded. If it fails, the transfer is
// marked failed (so nothing waits forever for a job that was never queued)
// and the error is returned for a 5xx.
func (s *Service) Enqueue(ctx context.Context, q queue.Queue, accountID, transferID string) error {
	body, _ := json.Marshal(Message{AccountID: accountID, TransferID: transferID})
	err := q.Send(ctx, queue.Message{Body: body})
	if err == nil {
		return nil
	}
	if _, ferr := s.FailTransfer(context.WithoutCancel(ctx), accountID, transferID, "The transfer could not be queued; start a new one."); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// FailTransfer ends a transfer whose long work cannot finish (its job could
// not be queued, or every attempt failed) as failed, leaving the database
// untouched. One conditional Update; a transfer no longer preparing or
// validating is returned as it is.
func (s *Service) FailTransfer(ctx context.Context, accountID, transferID, reason string) (*Transfer, error) {
	t, err := s.load(ctx, accountID, transferID)
	if err != nil {
		return nil, err
	}
	from := t.Status
	if from != TransferPreparing && from != TransferValidating {
		return s.public(t), nil
	}
	now := s.now().UTC()
	t.Status, t.Error, t.CompletedAt = TransferFailed, reason, &now
	if err := s.advance(ctx, accountID, t, from); err != nil {
		return nil, err
	}
	return s.public(t), nil
}

// Publisher sends a webhook event of an account and project
// (*webhooks.Repo is one).
type Publisher interface {
	Publish(ctx context.Context, accountID, projectID, event string, data any) error
}

// DefaultMaxAttempts is the databases queue's redrive limit: the last
// delivery before the dead-letter queue fails the transfer instead of
// leaving it preparing or validating.
var DefaultMaxAttempts = Queue.MaxReceives

// Worker defaults.
const (
	// DefaultJobTimeout bounds one job; the worker Lambda's timeout is
	// above it and the queue's visibility above that.
	DefaultJobTimeout = 10 * time.Minute
)

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	Service     *Service
	Events      Publisher // nil: no events
	MaxAttempts int       // default DefaultMaxAttempts
	Timeout     time.Duration
	Logger      *slog.Logger
}

// Worker runs transfer jobs off the request: RunExport and RunImport.
type Worker struct {
	c WorkerConfig
}

// NewWorker builds a worker.
func NewWorker(c WorkerConfig) *Worker {
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultJobTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return &Worker{c: c}
}

func terminal(status string) bool {
	return status != TransferPreparing && status != TransferValidating && status != TransferAwaitingParts
}

// Handle runs one job. nil means the message is done with: the transfer
// reached an end state (this delivery or an earlier one took it there), or
// it is gone. An error leaves the message for another attempt; the last
// attempt fails the transfer instead. The event is published by the
// delivery that moved the transfer to its end state, so a duplicate
// delivery does not repeat it.
func (w *Worker) Handle(ctx context.Context, m queue.Received) error {
	var msg Message
	if err := json.Unmarshal(m.Body, &msg); err != nil || msg.AccountID == "" || msg.TransferID == "" {
		w.c.Logger.Error("database transfer message malformed; dropped", "messageId", m.ID)
		return nil
	}
	s := w.c.Service
	before, err := s.load(ctx, msg.AccountID, msg.TransferID)
	if errors.Is(err, errNoTransfer) {
		return nil
	}
	if err != nil {
		return err
	}
	if terminal(before.Status) {
		return nil
	}
	jctx, cancel := context.WithTimeout(ctx, w.c.Timeout)
	defer cancel()
	switch before.Direction {
	case "export":
		err = s.RunExport(jctx, msg.AccountID, msg.TransferID)
	default:
		err = s.RunImport(jctx, msg.AccountID, msg.TransferID)
	}
	after, lerr := s.load(ctx, msg.AccountID, msg.TransferID)
	if lerr != nil {
		return errors.Join(err, lerr)
	}
	if terminal(after.Status) {
		if err == nil {
			w.publish(ctx, msg.AccountID, after)
		}
		return nil
	}
	if err == nil {
		return fmt.Errorf("databases: transfer %s still %s after its job", after.ID, after.Status)
	}
	if m.Attempts >= w.c.MaxAttempts {
		w.c.Logger.Error("database transfer failed on its last attempt", "transferId", after.ID, "error", err.Error())
		t, ferr := s.FailTransfer(ctx, msg.AccountID, msg.TransferID, "The transfer could not be processed; start a new one.")
		if ferr != nil {
			return ferr
		}
		w.publish(ctx, msg.AccountID, &stored{Transfer: *t, ProjectID: after.ProjectID})
		return nil
	}
	return err
}

func (w *Worker) publish(ctx context.Context, accountID string, t *stored) {
	if w.c.Events == nil {
		return
	}
	event := EventTransferCompleted
	if t.Status == TransferFailed {
		event = EventTransferFailed
	}
	if err := w.c.Events.Publish(ctx, accountID, t.ProjectID, event, w.c.Service.public(t)); err != nil {
		w.c.Logger.Error("webhook publish failed", "event", event, "error", err.Error())
	}
}

// HandleBatch handles a batch (see queue.HandleEach) and returns the ids of
// the messages to leave in the queue.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	return queue.HandleEach(ctx, ms, w.Handle, func(error) bool { return false }, w.c.Logger)
}

// Work is the worker on q: a received message stays hidden for a job's
// timeout and a minute more.
func (w *Worker) Work(q queue.Queue) work.Worker {
	return work.Worker{Name: Queue.Consumer, Queue: q, Handle: w.HandleBatch, Batch: 2, Visibility: w.c.Timeout + time.Minute}
}
