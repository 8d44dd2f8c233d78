package memqueue_test

import (
	"testing"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/memqueue"
	"platformapi/shared/adapters/queue/queuetest"
)

func TestConformance(t *testing.T) {
	queuetest.RunConformance(t, queuetest.Harness{
		New: func(t *testing.T, maxReceives int) (queue.Queue, queue.Queue) {
			dlq := memqueue.New()
			q := memqueue.New(memqueue.WithDeadLetter(dlq, maxReceives))
			t.Cleanup(func() { q.Close(); dlq.Close() })
			return q, dlq
		},
	})
}
