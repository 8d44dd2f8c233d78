package storequeue_test

import (
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/queuetest"
	"platformapi/shared/adapters/queue/storequeue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/adapters/testkit/teststores"
)

func open(st store.Store, maxReceives int) (queue.Queue, queue.Queue) {
	dlq := storequeue.New(st, "test-dlq")
	return storequeue.New(st, "test", storequeue.WithDeadLetter(dlq, maxReceives)), dlq
}

// TestConformance runs the port's rules on every store backend: the
// embedded one the local server uses, and DynamoDB under moto.
func TestConformance(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			queuetest.RunConformance(t, queuetest.Harness{
				New: func(t *testing.T, maxReceives int) (queue.Queue, queue.Queue) {
					q, dlq := open(b.Open(t, time.Now), maxReceives)
					t.Cleanup(func() { q.Close(); dlq.Close() })
					return q, dlq
				},
				Durable: durable(t, b),
			})
		})
	}
}

// durable reopens the store itself between the two lives of the queue: the
// bbolt file is closed and opened again, as by a restarted local server.
func durable(t *testing.T, b teststores.Backend) func(*testing.T, int) func() (queue.Queue, queue.Queue, func()) {
	if b.Name != teststores.Embedded.Name {
		return func(t *testing.T, maxReceives int) func() (queue.Queue, queue.Queue, func()) {
			st := b.Open(t, time.Now)
			return func() (queue.Queue, queue.Queue, func()) {
				q, dlq := open(st, maxReceives)
				return q, dlq, func() { q.Close(); dlq.Close() }
			}
		}
	}
	return func(t *testing.T, maxReceives int) func() (queue.Queue, queue.Queue, func()) {
		path := filepath.Join(t.TempDir(), "platform.db")
		return func() (queue.Queue, queue.Queue, func()) {
			st, err := boltstore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			q, dlq := open(st, maxReceives)
			return q, dlq, func() { q.Close(); dlq.Close(); st.Close() }
		}
	}
}
