package sqsqueue_test

import (
	"testing"

	"platformapi/shared/awsenv/awstest"
	"platformapi/shared/queue"
	"platformapi/shared/queue/queuetest"
	"platformapi/shared/queue/sqsqueue"
)

func TestConformance(t *testing.T) {
	env := awstest.Env(t)
	queuetest.RunConformance(t, queuetest.Harness{
		New: func(t *testing.T, maxReceives int) (queue.Queue, queue.Queue) {
			client, url, dlqURL := awstest.Queue(t, env, maxReceives)
			return sqsqueue.New(client, url), sqsqueue.New(client, dlqURL)
		},
	})
}
