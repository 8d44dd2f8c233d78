package provision_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/awsenv/provision"
	"platformapi/shared/adapters/awsenv/sharedconfig"
	"platformapi/shared/adapters/work"
)

func TestCreateMakesWhatIsMissingAndIsRepeatable(t *testing.T) {
	awstest.Env(t) // skips without an emulator
	base := awstest.Name(t, "res")
	t.Setenv("TABLE_NAME", base)
	t.Setenv("FILES_BUCKET", base+"-files")
	t.Setenv("ARCHIVES_BUCKET", base+"-archives")
	t.Setenv("ARTIFACTS_BUCKET", base+"-artifacts")
	t.Setenv("WEBHOOK_QUEUE_URL", "")
	t.Setenv("WEBHOOK_QUEUE_NAME", base+"-webhooks")
	t.Setenv("RUNS_QUEUE_URL", "")
	t.Setenv("RUNS_QUEUE_NAME", base+"-runs")
	t.Setenv("DATABASES_QUEUE_URL", "")
	t.Setenv("DATABASES_QUEUE_NAME", base+"-databases")
	t.Setenv("WALLETS_QUEUE_URL", "")
	t.Setenv("WALLETS_QUEUE_NAME", base+"-wallets")
	t.Setenv("KMS_KEY_ID", "alias/"+base)
	env, err := awsenv.New(awstest.Context(t), awsenv.WithSource(sharedconfig.Load))
	if err != nil {
		t.Fatal(err)
	}
	ctx := awstest.Context(t)
	for range 2 {
		if err := provision.Create(ctx, env, work.Queues); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { deleteResources(env) })
	n := env.Names
	if _, err := env.DynamoDB().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &n.Table}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{n.FilesBucket, n.ArchivesBucket, n.ArtifactsBucket} {
		if _, err := env.S3().HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &b}); err != nil {
			t.Fatalf("bucket %s: %v", b, err)
		}
	}
	for _, decl := range work.Queues {
		q := struct {
			awsenv.Queue
			maxReceives int
		}{n.Queue(decl), decl.MaxReceives}
		url, err := env.QueueURL(ctx, awsenv.Queue{Name: q.Name})
		if err != nil || url != q.URL {
			t.Fatalf("queue %s: %q, %v; recorded %q", q.Name, url, err, q.URL)
		}
		attrs, err := env.SQS().GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []sqstypes.QueueAttributeName{"RedrivePolicy"}})
		if err != nil {
			t.Fatalf("queue %s: %v", q.Name, err)
		}
		var redrive struct {
			MaxReceiveCount json.Number `json:"maxReceiveCount"`
			DeadLetterARN   string      `json:"deadLetterTargetArn"`
		}
		if err := json.Unmarshal([]byte(attrs.Attributes["RedrivePolicy"]), &redrive); err != nil ||
			redrive.MaxReceiveCount.String() != strconv.Itoa(q.maxReceives) || !strings.HasSuffix(redrive.DeadLetterARN, ":"+q.Name+"-dlq") {
			t.Fatalf("queue %s: redrive policy %q (%v); want %s-dlq after %d receives", q.Name, attrs.Attributes["RedrivePolicy"], err, q.Name, q.maxReceives)
		}
	}
	if _, err := env.KMS().DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: &n.KMSKeyID}); err != nil {
		t.Fatal(err)
	}
}

func deleteResources(env *awsenv.Env) {
	ctx := context.Background()
	n := env.Names
	_, _ = env.DynamoDB().DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &n.Table})
	for _, b := range []string{n.FilesBucket, n.ArchivesBucket, n.ArtifactsBucket} {
		_, _ = env.S3().DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &b})
	}
	for _, q := range n.Queues {
		for _, name := range []string{q.Name, q.Name + "-dlq"} {
			if url, err := env.QueueURL(ctx, awsenv.Queue{Name: name}); err == nil {
				_, _ = env.SQS().DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
			}
		}
	}
	if key, err := env.KMS().DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: &n.KMSKeyID}); err == nil {
		days := int32(7)
		_, _ = env.KMS().ScheduleKeyDeletion(ctx, &kms.ScheduleKeyDeletionInput{KeyId: key.KeyMetadata.KeyId, PendingWindowInDays: &days})
	}
	_, _ = env.KMS().DeleteAlias(ctx, &kms.DeleteAliasInput{AliasName: &n.KMSKeyID})
}
