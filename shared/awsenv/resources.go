package awsenv

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// How often a queued message is delivered before it moves to its
// dead-letter queue. The workers count their attempts against the same
// numbers (webhooks.DefaultMaxAttempts, runs.DefaultMaxAttempts, checked by
// a test in shared/app), and CDK and package provision set them on the
// queues they create.
const (
	WebhookMaxReceives   = 8
	RunsMaxReceives      = 3
	DatabasesMaxReceives = 3
	// WalletsMaxReceives is generous because a wallet transaction's
	// message mostly fails for the chain's reasons (an RPC endpoint down
	// or rate limiting), which pass; the transaction's own state, not the
	// receive count, decides whether it is broadcast again.
	WalletsMaxReceives = 10
)

// QueueURL returns q's URL, looking it up by name when CDK did not pass it.
func (e *Env) QueueURL(ctx context.Context, q Queue) (string, error) {
	if q.URL != "" {
		return q.URL, nil
	}
	out, err := e.SQS().GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &q.Name})
	if err != nil {
		return "", fmt.Errorf("awsenv: URL of queue %s: %w", q.Name, err)
	}
	return *out.QueueUrl, nil
}
