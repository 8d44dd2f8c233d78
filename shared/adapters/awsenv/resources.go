package awsenv

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
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
