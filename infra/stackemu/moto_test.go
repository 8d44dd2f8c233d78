package stackemu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"
)

// privateMotoEnforcing starts the stack's moto, makes a bucket and an
// operator while it is open, and then has it enforce IAM.
func privateMotoEnforcing(t *testing.T) (m *privateMoto, setup, op aws.Config) {
	t.Helper()
	if testing.Short() || os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Skip("starts a moto server; run through .ci/with-moto")
	}
	ctx := context.Background()
	m, err := startMoto(ctx, filepath.Join("..", "..", ".ci", "with-moto"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stop)
	setup = aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(m.endpoint), Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", "")}
	if op, err = operator(ctx, setup, "probe"); err != nil {
		t.Fatal(err)
	}
	if _, err := s3.NewFromConfig(setup, pathStyle).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("probe-bucket")}); err != nil {
		t.Fatal(err)
	}
	if err := m.enforce(ctx); err != nil {
		t.Fatal(err)
	}
	return m, setup, op
}

func pathStyle(o *s3.Options) { o.UsePathStyle = true }

// userWithoutPolicies makes, as the operator, a user allowed nothing and
// returns a configuration calling as it.
func userWithoutPolicies(t *testing.T, op aws.Config) aws.Config {
	t.Helper()
	ctx := context.Background()
	client := iam.NewFromConfig(op)
	if _, err := client.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("nobody")}); err != nil {
		t.Fatal(err)
	}
	key, err := client.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("nobody")})
	if err != nil {
		t.Fatal(err)
	}
	cfg := op.Copy()
	cfg.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(key.AccessKey.AccessKeyId), aws.ToString(key.AccessKey.SecretAccessKey), "")
	return cfg
}

// Once setup is done the stack's moto refuses what IAM would: a call
// without known credentials, while the operator's calls succeed.
func TestTheStacksMotoEnforcesIAMOnceSetupIsDone(t *testing.T) {
	_, setup, op := privateMotoEnforcing(t)
	ctx := context.Background()
	_, err := secretsmanager.NewFromConfig(setup).ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("an unknown access key after setup: %v, want refused", err)
	}
	if _, err := secretsmanager.NewFromConfig(op).ListSecrets(ctx, &secretsmanager.ListSecretsInput{}); err != nil {
		t.Fatalf("the operator: %v", err)
	}
}

// A refused call of a JSON protocol is answered as AWS answers it, an
// AccessDeniedException naming the action, which the SDK can read.
func TestTheStacksMotoRefusesJSONCallsAsAccessDeniedException(t *testing.T) {
	_, _, op := privateMotoEnforcing(t)
	ctx := context.Background()
	nobody := userWithoutPolicies(t, op)
	_, err := secretsmanager.NewFromConfig(nobody).ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "AccessDeniedException" || !strings.Contains(api.ErrorMessage(), "secretsmanager:ListSecrets") {
		t.Fatalf("a call without a grant: %v, want AccessDeniedException for secretsmanager:ListSecrets", err)
	}
}

// A signed request whose query or key holds escaped characters is accepted
// as AWS accepts it: an S3 list with prefix "files/" (sent as
// prefix=files%2F) and an object whose key holds '#', ':' and a space.
func TestTheStacksMotoAcceptsSignaturesOverEscapedQueries(t *testing.T) {
	_, _, op := privateMotoEnforcing(t)
	ctx := context.Background()
	c := s3.NewFromConfig(op, pathStyle)
	key := "files/acct#1:a b"
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("probe-bucket"), Key: &key, Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("probe-bucket"), Key: &key}); err != nil {
		t.Fatal(err)
	}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("probe-bucket"), Prefix: aws.String("files/acct#")})
	var api smithy.APIError
	if errors.As(err, &api) {
		t.Fatalf("list with an escaped prefix: %s", api.ErrorCode())
	}
	if err != nil || len(out.Contents) != 1 {
		t.Fatalf("list: %v %v", out, err)
	}
}
