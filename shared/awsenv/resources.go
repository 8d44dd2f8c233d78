package awsenv

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"platformapi/shared/blob/s3blob"
	"platformapi/shared/envelope/kmsenvelope"
	"platformapi/shared/queue/sqsqueue"
	"platformapi/shared/store/dynamostore"
)

// How often a queued message is delivered before it moves to its
// dead-letter queue. The workers count their attempts against the same
// numbers (webhooks.DefaultMaxAttempts, runs.DefaultMaxAttempts, checked by
// a test in shared/app), and CDK sets them on the real queues.
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

// CreateResources creates whatever named resource is missing: the table,
// the buckets, the queues with their dead-letter queues (name + "-dlq") and
// the KMS key behind its alias. It is for LocalStack and moto (the local
// server's --create-resources); on real AWS, CDK creates all of it. Queues
// created here get their URLs recorded in e.Names.
func (e *Env) CreateResources(ctx context.Context) error {
	if err := dynamostore.CreateTable(ctx, e.DynamoDB(), e.Names.Table); err != nil {
		return err
	}
	s3c := e.S3()
	for _, b := range []string{e.Names.FilesBucket, e.Names.ArchivesBucket, e.Names.ArtifactsBucket} {
		if err := s3blob.CreateBucket(ctx, s3c, b); err != nil {
			return err
		}
	}
	sqsc := e.SQS()
	for q, maxReceives := range map[*Queue]int{&e.Names.WebhookQueue: WebhookMaxReceives, &e.Names.RunsQueue: RunsMaxReceives, &e.Names.DatabasesQueue: DatabasesMaxReceives,
		&e.Names.WalletsQueue: WalletsMaxReceives} {
		if q.URL != "" {
			continue
		}
		url, err := sqsqueue.CreateQueue(ctx, sqsc, q.Name, q.Name+"-dlq", maxReceives)
		if err != nil {
			return err
		}
		q.URL = url
	}
	if strings.HasPrefix(e.Names.KMSKeyID, "alias/") {
		if _, err := kmsenvelope.CreateKey(ctx, e.KMS(), e.Names.KMSKeyID); err != nil {
			return err
		}
	}
	return nil
}

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
