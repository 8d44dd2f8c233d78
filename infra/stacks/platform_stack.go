// Package stacks defines the Platform API's deployment as CDK constructs:
// what runs, what it may touch and how an operator learns that it is
// failing. It holds no application logic and never reads AWS at synth time,
// so `cdk synth` works offline and every template is reproducible.
package stacks

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogsdestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/work"
	"platformapi/shared/domain/audit"
)

// PlatformStackProps configure one deployment.
type PlatformStackProps struct {
	awscdk.StackProps
	Settings Settings
}

// PlatformStack is the whole deployment in one stack.
//
// Why one stack and not a data stack plus an API stack: every function is
// wired to the table, buckets, queues, key and secret, so a split would turn
// some twenty references into CloudFormation exports. An export in use can
// be neither changed nor removed, which makes replacing a bucket or queue a
// multi-step deployment, and CDK's newer reference mechanisms (SSM-backed
// writers, Fn::GetStackOutput) are not understood by LocalStack, which our
// users test against. In one stack a deployment is atomic and rolls back as
// a whole. What a split would protect, the data surviving a `cdk destroy`,
// is done instead by the retain setting (RemovalPolicy RETAIN by default).
type PlatformStack struct {
	awscdk.Stack

	Table           awsdynamodb.Table
	FilesBucket     awss3.Bucket
	ArchivesBucket  awss3.Bucket
	ArtifactsBucket awss3.Bucket
	// AccessLogsBucket receives the server access logs of the three data
	// buckets: who read or wrote which object, which CloudTrail records
	// only at extra cost (data events).
	AccessLogsBucket awss3.Bucket
	// APIAccessLogs holds one line per HTTP API request.
	APIAccessLogs awslogs.LogGroup
	// Queues and DLQs are the queues package work declares, by name.
	Queues map[string]awssqs.Queue
	DLQs   map[string]awssqs.Queue
	// AuditRollupDLQ receives the stream positions of audit batches the
	// rollup could not count after its retries.
	AuditRollupDLQ awssqs.Queue
	// AuditIngestDLQ receives the log deliveries of audit events the
	// ingest could not store after Lambda's asynchronous retries.
	AuditIngestDLQ    awssqs.Queue
	EnvelopeKey       awskms.Key
	CreditTokenSecret awssecretsmanager.Secret
	// ArchiveSecret seeds the Ed25519 key that signs database archives.
	ArchiveSecret awssecretsmanager.Secret
	API           awsapigatewayv2.HttpApi
	// Functions by Function.Name.
	Functions map[string]awslambda.Function

	settings    Settings
	alarmAction awscloudwatch.IAlarmAction
}

// NewPlatformStack builds the deployment described by Functions and props.
// It panics on a props error, as CDK constructs do: synthesis is the only
// caller and there is nothing to recover.
func NewPlatformStack(scope constructs.Construct, id string, props *PlatformStackProps) *PlatformStack {
	if props == nil {
		panic("stacks: NewPlatformStack needs props (settings)")
	}
	sp := props.StackProps
	if sp.Description == nil {
		sp.Description = jsii.String(fmt.Sprintf("Platform API (%s): HTTP API, functions, table, buckets, queues", props.Settings.Stage))
	}
	s := &PlatformStack{
		Stack:     awscdk.NewStack(scope, &id, &sp),
		Functions: map[string]awslambda.Function{},
		settings:  props.Settings,
	}
	// Tags make the bill and the console readable per stage.
	// Not on the dashboard: CDK would write Tags on it, which cfn-lint's
	// CloudFormation schema for AWS::CloudWatch::Dashboard does not allow.
	untagged := &awscdk.TagProps{ExcludeResourceTypes: jsii.Strings("AWS::CloudWatch::Dashboard")}
	awscdk.Tags_Of(s.Stack).Add(jsii.String("project"), jsii.String("platformapi"), untagged)
	awscdk.Tags_Of(s.Stack).Add(jsii.String("stage"), jsii.String(props.Settings.Stage), untagged)
	if arn := props.Settings.AlarmTopicARN; arn != "" {
		s.alarmAction = awscloudwatchactions.NewSnsAction(awssns.Topic_FromTopicArn(s.Stack, jsii.String("AlarmTopic"), &arn))
	}

	s.addData()
	s.addAPI()
	for _, f := range Functions {
		s.addFunction(f)
	}
	s.subscribeAuditLogs()
	s.addObservability()
	s.addOutputs()
	s.addNagSuppressions()
	return s
}

func (s *PlatformStack) removal() awscdk.RemovalPolicy {
	if s.settings.Retain {
		return awscdk.RemovalPolicy_RETAIN
	}
	return awscdk.RemovalPolicy_DESTROY
}

func (s *PlatformStack) addData() {
	s.Table = awsdynamodb.NewTable(s.Stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String("sk"), Type: awsdynamodb.AttributeType_STRING},
		// On demand: zero cost at rest, and no capacity to plan.
		BillingMode: awsdynamodb.BillingMode_PAY_PER_REQUEST,
		// TTL only tidies up; the store treats expired items as absent
		// whether or not DynamoDB has deleted them yet.
		TimeToLiveAttribute: jsii.String("expiresAt"),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		DeletionProtection: jsii.Bool(s.settings.Retain),
		RemovalPolicy:      s.removal(),
		// The audit rollup reads new audit events from the stream, which
		// costs no read units; the new image is all it needs.
		Stream: awsdynamodb.StreamViewType_NEW_IMAGE,
	})

	s.AccessLogsBucket = s.accessLogsBucket()
	s.FilesBucket = s.bucket("FilesBucket")
	s.ArchivesBucket = s.bucket("ArchivesBucket")
	s.ArtifactsBucket = s.bucket("ArtifactsBucket")

	s.Queues, s.DLQs = map[string]awssqs.Queue{}, map[string]awssqs.Queue{}
	for _, q := range Queues {
		s.Queues[q.Name], s.DLQs[q.Name] = s.queue(q)
	}

	keyProps := &awskms.KeyProps{
		Description:       jsii.String(fmt.Sprintf("platformapi %s: wraps the data keys of connection secrets and wallet keys", s.settings.Stage)),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     s.removal(),
	}
	if !s.settings.Retain {
		// A disposable stage should not leave a key pending deletion for 30 days.
		keyProps.PendingWindow = awscdk.Duration_Days(jsii.Number(7))
	}
	s.EnvelopeKey = awskms.NewKey(s.Stack, jsii.String("EnvelopeKey"), keyProps)

	// Generated by CloudFormation so the seed never passes through a
	// developer's machine, the template or the build.
	s.CreditTokenSecret = awssecretsmanager.NewSecret(s.Stack, jsii.String("CreditTokenSeed"), &awssecretsmanager.SecretProps{
		Description: jsii.String(fmt.Sprintf("platformapi %s: seed of the credit-token signing key", s.settings.Stage)),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(64),
			ExcludePunctuation: jsii.Bool(true),
			IncludeSpace:       jsii.Bool(false),
		},
		RemovalPolicy: s.removal(),
	})

	s.ArchiveSecret = awssecretsmanager.NewSecret(s.Stack, jsii.String("ArchiveSigningSeed"), &awssecretsmanager.SecretProps{
		Description: jsii.String(fmt.Sprintf("platformapi %s: seed of the database archive signing key", s.settings.Stage)),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(64),
			ExcludePunctuation: jsii.Bool(true),
			IncludeSpace:       jsii.Bool(false),
		},
		RemovalPolicy: s.removal(),
	})

	for _, q := range Queues {
		s.alarm(q.Stack+"DLQDepth", s.DLQs[q.Name].MetricApproximateNumberOfMessagesVisible(period("Maximum")), q.DeadLettered)
	}
	s.AuditRollupDLQ = awssqs.NewQueue(s.Stack, jsii.String("AuditRollupDLQ"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	s.alarm("AuditRollupDLQDepth", s.AuditRollupDLQ.MetricApproximateNumberOfMessagesVisible(period("Maximum")),
		"Audit events could not be counted into usage after every retry; their stream positions wait in the dead-letter queue.")
	s.AuditIngestDLQ = awssqs.NewQueue(s.Stack, jsii.String("AuditIngestDLQ"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	s.alarm("AuditIngestDLQDepth", s.AuditIngestDLQ.MetricApproximateNumberOfMessagesVisible(period("Maximum")),
		"Audit events shipped in the functions' logs could not be stored after every retry; their deliveries wait in the dead-letter queue.")
}

// bucket is private (public access blocked, owner-enforced objects),
// encrypted at rest, reachable only over TLS 1.2+, drops the parts of
// abandoned multipart uploads, which are billed but never visible, and
// logs every access to the access logs bucket under its own id.
func (s *PlatformStack) bucket(id string) awss3.Bucket {
	props := privateBucket(s.removal())
	props.ServerAccessLogsBucket = s.AccessLogsBucket
	props.ServerAccessLogsPrefix = jsii.String(id + "/")
	return awss3.NewBucket(s.Stack, &id, props)
}

// accessLogsBucket is private like the data buckets and keeps access logs
// as long as the functions' logs. S3 delivers to it through a bucket
// policy (cdk.json's serverAccessLogsUseBucketPolicy), since owner-enforced
// objects allow no ACL. It logs nothing itself: its own access logs would
// have to go to yet another bucket.
func (s *PlatformStack) accessLogsBucket() awss3.Bucket {
	props := privateBucket(s.removal())
	*props.LifecycleRules = append(*props.LifecycleRules, &awss3.LifecycleRule{
		Id:         jsii.String("expire-access-logs"),
		Expiration: awscdk.Duration_Days(jsii.Number(float64(s.settings.LogRetentionDays))),
	})
	b := awss3.NewBucket(s.Stack, jsii.String("AccessLogsBucket"), props)
	nagAllow(b, "AwsSolutions-S1", "This is the server access logs destination of the data buckets; logging its own accesses would need a further bucket, and only S3's log delivery and operators read it.")
	return b
}

func privateBucket(removal awscdk.RemovalPolicy) *awss3.BucketProps {
	return &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		MinimumTLSVersion: jsii.Number(1.2),
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("abort-incomplete-multipart-uploads"),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
		RemovalPolicy: removal,
	}
}

// queue makes declared work queue q and its dead-letter queue. The
// visibility timeout is six times the consumer's timeout, as Lambda
// recommends, so a message is never handed out twice while a retried
// invocation still holds it.
func (s *PlatformStack) queue(decl work.Queue) (awssqs.Queue, awssqs.Queue) {
	timeout := consumerTimeout(decl)
	if timeout == 0 {
		panic(fmt.Sprintf("stacks: function %s does not consume queue %s; remove the queue or add its worker", decl.Consumer, decl.Name))
	}
	id := decl.Stack + "Queue"
	dlq := awssqs.NewQueue(s.Stack, jsii.String(decl.Stack+"DLQ"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)), // the maximum: time to investigate
	})
	q := awssqs.NewQueue(s.Stack, &id, &awssqs.QueueProps{
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(6 * timeout.Seconds())),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(float64(decl.MaxReceives))},
	})
	return q, dlq
}

// apiAccessLogFormat is one JSON line per request: enough to find a request
// by id, caller address and route, never a header or body (an API key
// travels in the Authorization header).
const apiAccessLogFormat = `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",` +
	`"requestTime":"$context.requestTime","method":"$context.httpMethod","routeKey":"$context.routeKey",` +
	`"status":"$context.status","protocol":"$context.protocol","responseLength":"$context.responseLength",` +
	`"latencyMs":"$context.responseLatency","integrationError":"$context.integrationErrorMessage"}`

func (s *PlatformStack) addAPI() {
	s.API = awsapigatewayv2.NewHttpApi(s.Stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		ApiName:     jsii.String(StackID(s.settings.Stage)),
		Description: jsii.String(fmt.Sprintf("Platform API (%s)", s.settings.Stage)),
	})
	s.APIAccessLogs = awslogs.NewLogGroup(s.Stack, jsii.String("api-access-logs"), &awslogs.LogGroupProps{
		Retention:     retentionDays[s.settings.LogRetentionDays],
		RemovalPolicy: s.removal(),
	})
	// Through the stage's L1 resource: the L2 stage takes access log
	// settings only as a jsii interface that Go cannot implement.
	stage := s.API.DefaultStage().Node().DefaultChild().(awsapigatewayv2.CfnStage)
	stage.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: s.APIAccessLogs.LogGroupArn(),
		Format:         jsii.String(apiAccessLogFormat),
	})
	s.alarm("Api5xx", s.API.MetricServerError(period("Sum")),
		"The HTTP API answered 5xx: a function failed, timed out or was throttled.")
}

// envelopeKeyActions are the two calls kmsenvelope makes, instead of
// grantEncryptDecrypt's wildcards (kms:ReEncrypt*, kms:GenerateDataKey*).
var envelopeKeyActions = []*string{jsii.String("kms:GenerateDataKey"), jsii.String("kms:Decrypt")}

// wiring is what one use (deploy.Use) means: the environment it passes and
// the access it grants. Keeping both in one row is what makes "a function
// sees only what it may use" hold by construction.
type wiring struct {
	use   deploy.Use
	env   map[string]*string
	grant func(f Function, fn awslambda.Function)
}

func (s *PlatformStack) wirings() []wiring {
	x := s.settings.X402
	return append([]wiring{
		{deploy.UseTable, map[string]*string{"TABLE_NAME": s.Table.TableName()},
			func(_ Function, fn awslambda.Function) { s.Table.GrantReadWriteData(fn) }},
		{deploy.UseFiles, map[string]*string{"FILES_BUCKET": s.FilesBucket.BucketName()},
			func(_ Function, fn awslambda.Function) { s.FilesBucket.GrantReadWrite(fn, nil) }},
		{deploy.UseArchives, map[string]*string{"ARCHIVES_BUCKET": s.ArchivesBucket.BucketName()},
			func(_ Function, fn awslambda.Function) { s.ArchivesBucket.GrantReadWrite(fn, nil) }},
		{deploy.UseArtifactsRead, map[string]*string{"ARTIFACTS_BUCKET": s.ArtifactsBucket.BucketName()},
			func(_ Function, fn awslambda.Function) { s.ArtifactsBucket.GrantRead(fn, nil) }},
		{deploy.UseArtifactsWrite, map[string]*string{"ARTIFACTS_BUCKET": s.ArtifactsBucket.BucketName()},
			func(_ Function, fn awslambda.Function) { s.ArtifactsBucket.GrantReadWrite(fn, nil) }},
		{deploy.UseKMS, map[string]*string{"KMS_KEY_ID": s.EnvelopeKey.KeyArn()},
			func(_ Function, fn awslambda.Function) { s.EnvelopeKey.Grant(fn, envelopeKeyActions...) }},
		{deploy.UseCreditSecret, map[string]*string{"CREDIT_TOKEN_SECRET_ARN": s.CreditTokenSecret.SecretArn()},
			func(_ Function, fn awslambda.Function) { s.CreditTokenSecret.GrantRead(fn, nil) }},
		{deploy.UseX402, map[string]*string{
			"X402_NETWORK":         &x.Network,
			"X402_ASSET":           &x.Asset,
			"X402_PAY_TO":          &x.PayTo,
			"X402_FACILITATOR_URL": &x.FacilitatorURL,
			"X402_RPC_URL":         &x.RPCURL,
		}, nil},
		{deploy.UseArchiveSecret, map[string]*string{"ARCHIVE_SIGNING_SECRET_ARN": s.ArchiveSecret.SecretArn()},
			func(_ Function, fn awslambda.Function) { s.ArchiveSecret.GrantRead(fn, nil) }},
		{deploy.UseChains, s.rpcEnv(), nil},
		{deploy.UseLiFi, map[string]*string{"LIFI_BASE_URL": &s.settings.LiFi.BaseURL, "LIFI_API_KEY": &s.settings.LiFi.APIKey}, nil},
		{deploy.ConsumeAuditStream, nil, s.consumeAuditStream},
		{deploy.IngestAuditLogs, nil, s.ingestAuditLogs},
	}, s.queueWirings()...)
}

// queueWirings are the two uses of each declared queue: sending to it, and
// being triggered by it.
func (s *PlatformStack) queueWirings() []wiring {
	var out []wiring
	for _, decl := range Queues {
		q := s.Queues[decl.Name]
		env := map[string]*string{awsenv.QueueURLEnv(decl): q.QueueUrl()}
		out = append(out,
			wiring{deploy.Send(decl), env, func(_ Function, fn awslambda.Function) { q.GrantSendMessages(fn) }},
			wiring{deploy.Consume(decl), env, func(f Function, fn awslambda.Function) { s.consume(f, fn, q) }})
	}
	return out
}

// rpcEnv is RPC_URL_<chainId> per configured chain, the names
// chain.FromEnv reads; with none configured, every chain answers 503.
func (s *PlatformStack) rpcEnv() map[string]*string {
	env := make(map[string]*string, len(s.settings.RPCURLs))
	for id, url := range s.settings.RPCURLs {
		env[fmt.Sprintf("RPC_URL_%d", id)] = jsii.String(url)
	}
	return env
}

// consume subscribes a worker to its queue. Reporting batch item failures
// lets one bad message be retried alone instead of redelivering the batch.
func (s *PlatformStack) consume(f Function, fn awslambda.Function, q awssqs.Queue) {
	fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(q, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(float64(max(f.BatchSize, 1))),
		ReportBatchItemFailures: jsii.Bool(true),
	}))
}

// auditRetries bounds how often a failing audit batch is retried before its
// position goes to the dead-letter queue; counting is idempotent, so a
// retry never counts an event twice.
const auditRetries = 10

// consumeAuditStream subscribes the rollup to the table's stream. The
// filter (evaluated by Lambda, not billed as invocations) passes only
// inserts of audit events, so the rest of the table's writes never wake
// it. Partial batch responses retry from the first uncounted record; the
// stream is read from its oldest record, so a first deployment counts
// every event the stream still holds.
func (s *PlatformStack) consumeAuditStream(f Function, fn awslambda.Function) {
	fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(s.Table, &awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(float64(max(f.BatchSize, 1))),
		MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(1)),
		ReportBatchItemFailures: jsii.Bool(true),
		RetryAttempts:           jsii.Number(auditRetries),
		OnFailure:               awslambdaeventsources.NewSqsDlq(s.AuditRollupDLQ),
		Filters: &[]*map[string]interface{}{awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_IsEqual(jsii.String("INSERT")),
			"dynamodb": map[string]interface{}{
				"Keys": map[string]interface{}{"pk": map[string]interface{}{"S": awslambda.FilterRule_BeginsWith(jsii.String("aud#"))}},
			},
		})},
	}))
}

// auditIngestRetries is how often Lambda retries a failed log delivery
// (asynchronous invocation, at most 2) before it goes to the dead-letter
// queue; storing is idempotent, so a retry never stores an event twice.
const auditIngestRetries = 2

// ingestAuditLogs sends the ingest's failed deliveries to its dead-letter
// queue; subscribeAuditLogs points the log groups at it.
func (s *PlatformStack) ingestAuditLogs(_ Function, fn awslambda.Function) {
	fn.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		RetryAttempts: jsii.Number(auditIngestRetries),
		OnFailure:     awslambdadestinations.NewSqsDestination(s.AuditIngestDLQ),
	})
}

// subscribeAuditLogs delivers the audit event lines of every HTTP
// function's log group to the ingest function: the request writes its
// event as a log line instead of a PutItem (audit.NewShippingRecorder).
// The filter passes only those lines, so the rest of the log is never
// delivered.
func (s *PlatformStack) subscribeAuditLogs() {
	var ingest awslambda.Function
	for _, f := range Functions {
		if f.Uses.Has(deploy.IngestAuditLogs) {
			ingest = s.Functions[f.Name]
		}
	}
	if ingest == nil {
		return
	}
	dest := awslogsdestinations.NewLambdaDestination(ingest, nil)
	for _, f := range Functions {
		if len(f.Routes()) == 0 {
			continue
		}
		awslogs.NewSubscriptionFilter(s.Stack, jsii.String(f.Name+"-audit-events"), &awslogs.SubscriptionFilterProps{
			LogGroup:      s.Functions[f.Name].LogGroup(),
			Destination:   dest,
			FilterPattern: awslogs.FilterPattern_Literal(jsii.String(audit.ShipFilterPattern)),
			FilterName:    jsii.String("audit-events"),
		})
	}
}

func (s *PlatformStack) addFunction(f Function) {
	// An explicit log group sets retention at creation (no custom resource)
	// and lets the role write to this group alone instead of the managed
	// AWSLambdaBasicExecutionRole, which allows logs on every resource.
	logs := awslogs.NewLogGroup(s.Stack, jsii.String(f.Name+"-logs"), &awslogs.LogGroupProps{
		Retention:     retentionDays[s.settings.LogRetentionDays],
		RemovalPolicy: s.removal(),
	})
	role := awsiam.NewRole(s.Stack, jsii.String(f.Name+"-role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String(fmt.Sprintf("platformapi %s: %s function", s.settings.Stage, f.Name)),
	})
	logs.GrantWrite(role)

	env := map[string]*string{
		"STAGE":     jsii.String(s.settings.Stage),
		"LOG_LEVEL": jsii.String(s.settings.LogLevel),
	}
	var grants []func(Function, awslambda.Function)
	for _, w := range s.wirings() {
		if !f.Uses.Has(w.use) {
			continue
		}
		maps.Copy(env, w.env)
		if w.grant != nil {
			grants = append(grants, w.grant)
		}
	}

	var ephemeral awscdk.Size
	if f.EphemeralMiB > 0 {
		ephemeral = awscdk.Size_Mebibytes(jsii.Number(float64(f.EphemeralMiB)))
	}
	fn := awslambda.NewFunction(s.Stack, jsii.String(f.Name), &awslambda.FunctionProps{
		Description:  jsii.String(fmt.Sprintf("platformapi %s: %s", s.settings.Stage, f.Name)),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(s.settings.AssetDir, f.Name)), nil),
		MemorySize:   jsii.Number(float64(f.MemoryMiB)),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(f.Timeout.Seconds())),
		Role:         role,
		LogGroup:     logs,
		// nil keeps Lambda's default of 512 MiB.
		EphemeralStorageSize: ephemeral,
		// X-Ray: the invocation and function segments without code (see
		// observability.go for why no SDK subsegments).
		Tracing: awslambda.Tracing_ACTIVE,
	})
	// Sorted so the template, and so the diff of a deployment, is stable.
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fn.AddEnvironment(jsii.String(k), env[k], nil)
	}
	for _, g := range grants {
		g(f, fn)
	}
	s.Functions[f.Name] = fn
	s.route(f, fn)
	s.schedule(f, fn)

	s.alarm(f.Name+"-errors", fn.MetricErrors(period("Sum")),
		fmt.Sprintf("The %s function returned errors (crash, timeout or unhandled failure).", f.Name))
	s.alarm(f.Name+"-throttles", fn.MetricThrottles(period("Sum")),
		fmt.Sprintf("The %s function was throttled: the account's concurrency is exhausted.", f.Name))
	s.alarmAt(f.Name+"-duration-p99", fn.MetricDuration(period("p99")), latencyAlarmShare*float64(f.Timeout.Milliseconds()), alarmPeriods,
		fmt.Sprintf("The %s function's p99 duration stayed above %.0f%% of its %v timeout for %d periods of 5 minutes: it is about to time out.",
			f.Name, 100*latencyAlarmShare, f.Timeout, alarmPeriods))
}

// schedule has an EventBridge rule invoke a scheduled function; the target
// adds the one invoke permission, for that rule alone.
func (s *PlatformStack) schedule(f Function, fn awslambda.Function) {
	if !f.Scheduled() {
		return
	}
	awsevents.NewRule(s.Stack, jsii.String(f.Name+"-schedule"), &awsevents.RuleProps{
		Description: jsii.String(fmt.Sprintf("platformapi %s: run %s every %v", s.settings.Stage, f.Name, f.Rate())),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(f.Rate().Minutes()))),
		Targets:     &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, nil)},
	})
}

// route attaches the function's routes. Each function gets one invoke
// permission scoped to this API instead of one per route, which keeps the
// template small; the owner of "$default" keeps per-route permissions
// because the catch-all's source ARN (<api>/*/$default) has no method and
// path segments for an API-wide pattern (<api>/*/*/*) to match.
func (s *PlatformStack) route(f Function, fn awslambda.Function) {
	if len(f.Routes()) == 0 {
		return
	}
	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(f.Name+"-integration"), fn,
		&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
			PayloadFormatVersion:   awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
			ScopePermissionToRoute: jsii.Bool(slices.Contains(f.Routes(), "$default")),
		})
	for _, path := range f.Routes() {
		if path == "$default" {
			awsapigatewayv2.NewHttpRoute(s.Stack, jsii.String("DefaultRoute"), &awsapigatewayv2.HttpRouteProps{
				HttpApi:     s.API,
				RouteKey:    awsapigatewayv2.HttpRouteKey_DEFAULT(),
				Integration: integration,
			})
			continue
		}
		s.API.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(path),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY},
			Integration: integration,
		})
	}
}

func (s *PlatformStack) addOutputs() {
	out := func(id, description string, value *string) {
		awscdk.NewCfnOutput(s.Stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(description)})
	}
	out("BaseUrl", "Base URL of the API; clients append /api-keys, /services, ...", jsii.String(*s.API.ApiEndpoint()+"/v1"))
	out("McpUrl", "MCP endpoint (Streamable HTTP)", jsii.String(*s.API.ApiEndpoint()+"/mcp"))
	// What `mint-credit-token` needs to issue the first key against AWS.
	out("TableName", "TABLE_NAME for tools run against this stage", s.Table.TableName())
	out("CreditTokenSecretArn", "CREDIT_TOKEN_SECRET_ARN for mint-credit-token", s.CreditTokenSecret.SecretArn())
}

// alarm fires on the first occurrence within five minutes: every error,
// throttle, 5xx or dead letter here is one a customer noticed. Missing data
// means no traffic, which is not a failure.
func (s *PlatformStack) alarm(id string, metric awscloudwatch.IMetric, description string) {
	s.alarmAt(id, metric, 1, 1, description)
}

// alarmAt fires when metric reaches threshold in each of periods
// consecutive periods; missing data is not breaching.
func (s *PlatformStack) alarmAt(id string, metric awscloudwatch.IMetric, threshold float64, periods int, description string) {
	a := awscloudwatch.NewAlarm(s.Stack, jsii.String(id), &awscloudwatch.AlarmProps{
		Metric:             metric,
		AlarmDescription:   jsii.String(fmt.Sprintf("platformapi %s: %s", s.settings.Stage, description)),
		Threshold:          jsii.Number(threshold),
		EvaluationPeriods:  jsii.Number(float64(periods)),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	if s.alarmAction != nil {
		a.AddAlarmAction(s.alarmAction)
	}
}

func period(statistic string) *awscloudwatch.MetricOptions {
	return &awscloudwatch.MetricOptions{
		Period:    awscdk.Duration_Minutes(jsii.Number(5)),
		Statistic: jsii.String(statistic),
	}
}
