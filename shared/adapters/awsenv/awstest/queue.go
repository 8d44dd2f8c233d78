package awstest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/queue/sqsqueue"
)

// Queue creates a fresh queue with a dead-letter queue after maxReceives
// receives, both deleted when the test ends, and returns their URLs.
func Queue(t testing.TB, env *awsenv.Env, maxReceives int) (client *sqs.Client, url, dlqURL string) {
	t.Helper()
	client = env.SQS()
	name := Name(t, "test-queue")
	ctx := Context(t)
	url, err := sqsqueue.CreateQueue(ctx, client, name, name+"-dlq", maxReceives)
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws(name + "-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, u := range []string{url, *dlq.QueueUrl} {
			if _, err := client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &u}); err != nil {
				t.Logf("delete queue %s: %v", u, err)
			}
		}
	})
	return client, url, *dlq.QueueUrl
}

func aws(s string) *string { return &s }
