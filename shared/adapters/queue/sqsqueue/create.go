package sqsqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// CreateQueue creates queue name (and, unless dlqName is empty, its
// dead-letter queue, receiving messages after maxReceives receives) and
// returns its URL; existing queues with the same settings are reused. On real
// AWS the CDK stack owns the queues; this serves LocalStack, moto and tests.
func CreateQueue(ctx context.Context, client *sqs.Client, name, dlqName string, maxReceives int) (string, error) {
	attrs := map[string]string{}
	if dlqName != "" {
		dlq, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &dlqName,
			Attributes: map[string]string{string(types.QueueAttributeNameMessageRetentionPeriod): "1209600"}})
		if err != nil {
			return "", fmt.Errorf("sqsqueue: create queue %s: %w", dlqName, err)
		}
		got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl,
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			return "", fmt.Errorf("sqsqueue: read arn of %s: %w", dlqName, err)
		}
		policy, _ := json.Marshal(map[string]string{
			"deadLetterTargetArn": got.Attributes[string(types.QueueAttributeNameQueueArn)],
			"maxReceiveCount":     strconv.Itoa(maxReceives),
		})
		attrs[string(types.QueueAttributeNameRedrivePolicy)] = string(policy)
	}
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	if err != nil {
		return "", fmt.Errorf("sqsqueue: create queue %s: %w", name, err)
	}
	return *out.QueueUrl, nil
}
