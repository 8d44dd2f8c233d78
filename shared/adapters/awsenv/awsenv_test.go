package awsenv_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/work"
	"platformapi/shared/groups/runs"
)

func TestNamesHaveLocalDefaultsAndFollowTheEnvironment(t *testing.T) {
	for _, v := range []string{"TABLE_NAME", "FILES_BUCKET", "ARCHIVES_BUCKET", "ARTIFACTS_BUCKET", "KMS_KEY_ID"} {
		t.Setenv(v, "")
	}
	want := awsenv.Names{
		Table: "platform-api", FilesBucket: "platform-api-files", ArchivesBucket: "platform-api-archives",
		ArtifactsBucket: "platform-api-artifacts", Queues: map[string]awsenv.Queue{}, KMSKeyID: "alias/platform-api",
	}
	for _, q := range work.Queues {
		t.Setenv(q.Env+"_QUEUE_URL", "")
		t.Setenv(q.Env+"_QUEUE_NAME", "")
		want.Queues[q.Name] = awsenv.Queue{Name: "platform-api-" + q.Name}
	}
	if want.Queues["webhooks"].Name != "platform-api-webhooks" {
		t.Fatalf("the queues are not named by their declarations: %v", want.Queues)
	}
	if got := awsenv.NamesFromEnv(); !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults = %+v; want %+v", got, want)
	}
	t.Setenv("TABLE_NAME", "prod-table")
	t.Setenv("RUNS_QUEUE_URL", "https://sqs.example/123/runs")
	t.Setenv("KMS_KEY_ID", "arn:aws:kms:eu-west-1:123:key/abc")
	got := awsenv.NamesFromEnv()
	if got.Table != "prod-table" || got.Queue(runs.Queue).URL != "https://sqs.example/123/runs" || got.KMSKeyID != "arn:aws:kms:eu-west-1:123:key/abc" {
		t.Fatalf("overrides = %+v", got)
	}
}

// A group's queue is in no list awsenv reads: its name and URL come from
// its declaration's variables when its function asks, as the kernel's do.
func TestAGroupsQueueIsNamedFromItsVariables(t *testing.T) {
	q := work.Queue{Name: "examples", Env: "EXAMPLES"}
	t.Setenv("EXAMPLES_QUEUE_URL", "")
	t.Setenv("EXAMPLES_QUEUE_NAME", "")
	if got := awsenv.NamesFromEnv().Queue(q); got != (awsenv.Queue{Name: "platform-api-examples"}) {
		t.Errorf("default = %+v, want platform-api-examples", got)
	}
	t.Setenv("EXAMPLES_QUEUE_NAME", "dev-examples")
	if got := awsenv.NamesFromEnv().Queue(q); got != (awsenv.Queue{Name: "dev-examples"}) {
		t.Errorf("named = %+v, want dev-examples", got)
	}
	t.Setenv("EXAMPLES_QUEUE_URL", "https://sqs.example/123/examples")
	if got := awsenv.NamesFromEnv().Queue(q); got.URL != "https://sqs.example/123/examples" {
		t.Errorf("on Lambda = %+v, want the URL CDK passes", got)
	}
	recorded := awsenv.Names{Queues: map[string]awsenv.Queue{"examples": {URL: "https://sqs.example/created", Name: "created"}}}
	if got := recorded.Queue(q); got.URL != "https://sqs.example/created" {
		t.Errorf("after provisioning = %+v, want the recorded queue", got)
	}
}

// TestCallCounterCountsEveryAttempt proves retries are counted: they are
// round trips, and billed.
func TestCallCounterCountsEveryAttempt(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	db, table := awstest.Table(t, env)
	s := dynamostore.New(db, table)
	ctx := awstest.Context(t)
	env.Calls.Reset()
	faults.Set("DynamoDB.GetItem", awsenv.Throttle)
	_, err := s.Get(ctx, store.Key{PK: "p", SK: "s"})
	faults.Clear()
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("err = %v; want ErrUnavailable", err)
	}
	if n := env.Calls.Snapshot()["DynamoDB.GetItem"]; n != 3 || faults.Hits("DynamoDB.GetItem") != 3 {
		t.Fatalf("counted %d GetItem round trips, injected %d; want 3 attempts", n, faults.Hits("DynamoDB.GetItem"))
	}
	env.Calls.Reset()
	if env.Calls.Total() != 0 {
		t.Fatal("Reset left counts behind")
	}
}

// A deployed function's configuration is what Lambda puts in its
// environment: the execution role's credentials, the region and, on an
// emulator, the endpoint.
func TestEnvironmentIsWhatLambdaGivesAFunction(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	cfg, err := awsenv.Environment(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if creds.AccessKeyID != "AKIDEXAMPLE" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
		t.Errorf("credentials %+v", creds)
	}
	if cfg.Region != "eu-west-1" || cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://127.0.0.1:4566" {
		t.Errorf("region %q, endpoint %v", cfg.Region, cfg.BaseEndpoint)
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "")
	cfg, err = awsenv.Environment(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Credentials.Retrieve(t.Context()); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("without credentials: %v, want the missing variable named", err)
	}
}

// New's default source reaches the emulator with the environment's
// credentials alone, as a function does on Lambda.
func TestNewOnTheEnvironmentAloneReachesTheEmulator(t *testing.T) {
	awstest.Env(t) // skips without an emulator
	t.Setenv("AWS_PROFILE", "")
	env, err := awsenv.New(awstest.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.DynamoDB().ListTables(awstest.Context(t), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	if n := env.Calls.Snapshot()["DynamoDB.ListTables"]; n != 1 {
		t.Errorf("counted %d ListTables round trips, want 1", n)
	}
}

// The bound of one SDK call comes from AWS_CALL_TIMEOUT when it is set, so
// every process of a test run against a busy emulator waits alike; an
// explicit option still wins, and a malformed value stops the process at
// start-up instead of leaving calls unbounded.
func TestTheCallTimeoutFollowsTheEnvironmentUnlessAnOptionSetsIt(t *testing.T) {
	errStop := errors.New("stop before sending")
	deadlineOf := func(t *testing.T, opts ...awsenv.Option) time.Duration {
		t.Helper()
		var left time.Duration
		probe := awsenv.WithAPIOptions(func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("probe",
				func(ctx context.Context, _ middleware.InitializeInput, _ middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if d, ok := ctx.Deadline(); ok {
						left = time.Until(d)
					}
					return middleware.InitializeOutput{}, middleware.Metadata{}, errStop
				}), middleware.After)
		})
		source := awsenv.WithSource(func(context.Context) (aws.Config, error) {
			return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}, nil
		})
		env, err := awsenv.New(t.Context(), append([]awsenv.Option{source, probe}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.DynamoDB().ListTables(t.Context(), &dynamodb.ListTablesInput{}); !errors.Is(err, errStop) {
			t.Fatalf("the probe did not run: %v", err)
		}
		return left
	}
	near := func(got, want time.Duration) bool { return got > want-5*time.Second && got <= want }
	for _, c := range []struct {
		env  string
		opts []awsenv.Option
		want time.Duration
	}{
		{"", nil, 10 * time.Second},
		{"90s", nil, 90 * time.Second},
		{"90s", []awsenv.Option{awsenv.WithCallTimeout(2 * time.Minute)}, 2 * time.Minute},
	} {
		t.Setenv(awsenv.CallTimeoutEnv, c.env)
		if got := deadlineOf(t, c.opts...); !near(got, c.want) {
			t.Errorf("%s=%q: a call has %v left; want about %v", awsenv.CallTimeoutEnv, c.env, got, c.want)
		}
	}
	for _, bad := range []string{"soon", "0s", "-1s"} {
		t.Setenv(awsenv.CallTimeoutEnv, bad)
		if _, err := awsenv.New(t.Context()); err == nil || !strings.Contains(err.Error(), awsenv.CallTimeoutEnv) {
			t.Errorf("%s=%q: New answered %v; want the variable named", awsenv.CallTimeoutEnv, bad, err)
		}
	}
}
