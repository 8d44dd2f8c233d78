package sqsqueue_test

import (
	"errors"
	"testing"
	"time"

	"platformapi/shared/adapters/awsenv"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/queuetest"
	"platformapi/shared/adapters/queue/sqsqueue"
)

func TestConformance(t *testing.T) {
	env := awstest.Env(t)
	queuetest.RunConformance(t, queuetest.Harness{
		New: func(t *testing.T, maxReceives int) (queue.Queue, queue.Queue) {
			client, url, dlqURL := awstest.Queue(t, env, maxReceives)
			return sqsqueue.New(client, url), sqsqueue.New(client, dlqURL)
		},
		Durable: func(t *testing.T, maxReceives int) func() (queue.Queue, queue.Queue, func()) {
			client, url, dlqURL := awstest.Queue(t, env, maxReceives)
			return func() (queue.Queue, queue.Queue, func()) {
				q, dlq := sqsqueue.New(client, url), sqsqueue.New(client, dlqURL)
				return q, dlq, func() { q.Close(); dlq.Close() }
			}
		},
	})
}

func TestOutagesAnswerUnavailable(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	client, url, _ := awstest.Queue(t, env, 3)
	q := sqsqueue.New(client, url)
	ctx := awstest.Context(t)
	faults.Set("SQS.SendMessageBatch", awsenv.ServerError)
	faults.Set("SQS.ReceiveMessage", awsenv.Throttle)
	defer faults.Clear()
	if err := q.Send(ctx, queue.Message{Body: []byte("x")}); !errors.Is(err, queue.ErrUnavailable) {
		t.Fatalf("Send during an outage: %v; want ErrUnavailable", err)
	}
	if _, err := q.Receive(ctx, 1, time.Second, 0); !errors.Is(err, queue.ErrUnavailable) {
		t.Fatalf("Receive during an outage: %v; want ErrUnavailable", err)
	}
}
