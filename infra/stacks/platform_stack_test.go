package stacks

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/deploy"
	"platformapi/shared/domain/audit"
)

// TestTemplateHoldsExactlyTheResourcesTheFunctionTableImplies proves nothing
// in the template is unused or unexplained: every count follows from the
// function table, and the types listed here are all the template has.
func TestTemplateHoldsExactlyTheResourcesTheFunctionTableImplies(t *testing.T) {
	s := defaults(t)
	var routes, http, workers, scheduled, publicRoutes int
	for _, f := range Functions {
		if f.Scheduled() {
			scheduled++
		}
		routes += len(f.Routes())
		if len(f.Routes()) > 0 {
			http++
		}
		if f.Worker() {
			workers++
		}
		if slices.Contains(f.Routes(), "$default") {
			publicRoutes = len(f.Routes())
		}
	}
	n, q := len(Functions), len(Queues)
	want := map[string]int{
		"AWS::Lambda::Function": n,
		"AWS::IAM::Role":        n,
		"AWS::IAM::Policy":      n,
		"AWS::Logs::LogGroup":   n + 1, // and the API's access logs
		// errors, throttles and p99 duration per function; API 5xx and p99;
		// every DLQ (the declared queues' and the two audit ones); every
		// declared queue's age; the rollup's iterator age; table throttles
		// and system errors; the KMS request rate.
		"AWS::CloudWatch::Alarm":         3*n + 2 + (q + 2) + q + 1 + 2 + 1,
		"AWS::CloudWatch::Dashboard":     1,
		"AWS::ApiGatewayV2::Api":         1,
		"AWS::ApiGatewayV2::Stage":       1,
		"AWS::ApiGatewayV2::Route":       routes,
		"AWS::ApiGatewayV2::Integration": http,
		// and one per audit subscription: its log group may invoke the ingest
		"AWS::Lambda::Permission":         publicRoutes + http - 1 + scheduled + http,
		"AWS::Logs::SubscriptionFilter":   http,
		"AWS::Lambda::EventInvokeConfig":  1,
		"AWS::Events::Rule":               scheduled,
		"AWS::Lambda::EventSourceMapping": workers,
		"AWS::DynamoDB::Table":            1,
		"AWS::S3::Bucket":                 4, // files, archives, artifacts, access logs
		"AWS::S3::BucketPolicy":           4,
		"AWS::SQS::Queue":                 2*q + 2, // each declared queue and its DLQ; the audit DLQs
		"AWS::SQS::QueuePolicy":           2*q + 2,
		"AWS::KMS::Key":                   1,
		"AWS::SecretsManager::Secret":     2,
	}
	got := map[string]int{}
	for _, r := range s.resources {
		got[r.Type]++
	}
	for _, typ := range slices.Sorted(maps.Keys(want)) {
		must(t, func() { s.template.ResourceCountIs(jsii.String(typ), jsii.Number(float64(want[typ]))) })
	}
	for typ, c := range got {
		if _, ok := want[typ]; !ok {
			t.Errorf("template has %d unexpected %s", c, typ)
		}
	}
}

func TestEveryFunctionRunsOnProvidedAL2023Arm64(t *testing.T) {
	s := defaults(t)
	must(t, func() {
		s.template.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Runtime":       "provided.al2023",
			"Architectures": []any{"arm64"},
			"Handler":       "bootstrap",
		})
	})
	for _, f := range Functions {
		id := s.logicalID(t, s.stack.Functions[f.Name].FunctionName())
		p := s.resources[id].Properties
		if p["MemorySize"] != float64(f.MemoryMiB) || p["Timeout"] != f.Timeout.Seconds() {
			t.Errorf("%s: memory %v timeout %v, want %d MiB and %v", f.Name, p["MemorySize"], p["Timeout"], f.MemoryMiB, f.Timeout)
		}
	}
}

func TestTableIsOnDemandWithTTLAndPointInTimeRecovery(t *testing.T) {
	s := defaults(t)
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"BillingMode": "PAY_PER_REQUEST",
			"KeySchema": []any{
				map[string]any{"AttributeName": "pk", "KeyType": "HASH"},
				map[string]any{"AttributeName": "sk", "KeyType": "RANGE"},
			},
			"AttributeDefinitions": []any{
				map[string]any{"AttributeName": "pk", "AttributeType": "S"},
				map[string]any{"AttributeName": "sk", "AttributeType": "S"},
			},
			"TimeToLiveSpecification":          map[string]any{"AttributeName": "expiresAt", "Enabled": true},
			"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
		})
	})
}

func TestBucketsArePrivateEncryptedAndDropAbandonedUploads(t *testing.T) {
	s := defaults(t)
	must(t, func() {
		s.template.AllResourcesProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
			"PublicAccessBlockConfiguration": map[string]any{
				"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
			},
			"OwnershipControls": map[string]any{"Rules": []any{map[string]any{"ObjectOwnership": "BucketOwnerEnforced"}}},
			"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": assertions.Match_ArrayWith(&[]any{
				map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}},
			})},
			"LifecycleConfiguration": map[string]any{"Rules": assertions.Match_ArrayWith(&[]any{
				assertions.Match_ObjectLike(&map[string]any{
					"Status":                         "Enabled",
					"AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": 1},
				}),
			})},
		})
	})
}

func TestEveryBucketPolicyRefusesRequestsWithoutTLS(t *testing.T) {
	s := defaults(t)
	for _, bucket := range s.ofType("AWS::S3::Bucket") {
		var tls, version bool
		for _, id := range s.ofType("AWS::S3::BucketPolicy") {
			p := s.resources[id].Properties
			if !refersTo(p["Bucket"], bucket) {
				continue
			}
			for _, st := range statements(p["PolicyDocument"]) {
				if st["Effect"] != "Deny" || !slices.Equal(strs(st["Action"]), []string{"s3:*"}) {
					continue
				}
				cond := fmt.Sprint(st["Condition"])
				tls = tls || cond == "map[Bool:map[aws:SecureTransport:false]]"
				version = version || cond == "map[NumericLessThan:map[s3:TlsVersion:1.2]]"
			}
		}
		if !tls || !version {
			t.Errorf("bucket %s: deny without TLS %v, deny below TLS 1.2 %v; want both", bucket, tls, version)
		}
	}
}

func TestWorkQueuesRedriveToTheirDeadLetterQueues(t *testing.T) {
	s := defaults(t)
	for _, q := range Queues {
		queue, dlq := s.logicalID(t, s.stack.Queues[q.Name].QueueName()), s.logicalID(t, s.stack.DLQs[q.Name].QueueName())
		p := s.resources[queue].Properties
		redrive, _ := p["RedrivePolicy"].(map[string]any)
		if !refersTo(redrive["deadLetterTargetArn"], dlq) || redrive["maxReceiveCount"] != float64(q.MaxReceives) {
			t.Errorf("%s queue: redrive %v, want %s after %d receives", q.Name, redrive, dlq, q.MaxReceives)
		}
		if vis, _ := p["VisibilityTimeout"].(float64); vis < 6*consumerTimeout(q).Seconds() {
			t.Errorf("%s queue: visibility timeout %vs, want at least 6x its consumer's %v", q.Name, vis, consumerTimeout(q))
		}
		d := s.resources[dlq].Properties
		if d["RedrivePolicy"] != nil || d["MessageRetentionPeriod"] != float64(14*24*3600) {
			t.Errorf("%s DLQ: %v, want no redrive and 14 days retention", q.Name, d)
		}
	}
	must(t, func() {
		s.template.AllResourcesProperties(jsii.String("AWS::SQS::Queue"), map[string]any{"SqsManagedSseEnabled": true})
	})
}

func TestWorkersReportBatchItemFailures(t *testing.T) {
	s := defaults(t)
	queues := map[deploy.Use]*string{}
	for _, q := range Queues {
		queues[deploy.Consume(q)] = s.stack.Queues[q.Name].QueueName()
	}
	for _, f := range Functions {
		if !f.Worker() {
			continue
		}
		for use, queue := range queues {
			if !f.Uses.Has(use) {
				continue
			}
			fn, q := s.logicalID(t, s.stack.Functions[f.Name].FunctionName()), s.logicalID(t, queue)
			must(t, func() {
				s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
					"FunctionName":          map[string]any{"Ref": fn},
					"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{q, "Arn"}},
					"BatchSize":             f.BatchSize,
					"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
				})
			})
		}
	}
	must(t, func() {
		s.template.AllResourcesProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		})
	})
}

// TestScheduledFunctionsRunAtTheirRate: each scheduled function has one
// enabled rule at its rate targeting it, and may be invoked by that rule
// alone.
func TestScheduledFunctionsRunAtTheirRate(t *testing.T) {
	s := defaults(t)
	n := 0
	for _, f := range Functions {
		if !f.Scheduled() {
			continue
		}
		n++
		fn := s.logicalID(t, s.stack.Functions[f.Name].FunctionName())
		rate := fmt.Sprintf("rate(%d minutes)", int(f.Rate().Minutes()))
		if f.Rate().Minutes() == 1 {
			rate = "rate(1 minute)"
		}
		if f.Rate().Minutes() == 60 {
			rate = "rate(1 hour)"
		}
		must(t, func() {
			s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
				"ScheduleExpression": rate,
				"State":              "ENABLED",
				"Targets":            assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{"Arn": map[string]any{"Fn::GetAtt": []any{fn, "Arn"}}})}),
			})
		})
		must(t, func() {
			s.template.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
				"Action":       "lambda:InvokeFunction",
				"FunctionName": map[string]any{"Fn::GetAtt": []any{fn, "Arn"}},
				"Principal":    "events.amazonaws.com",
			})
		})
	}
	if n == 0 {
		t.Fatal("no scheduled function: the file sweeper should be one")
	}
}

// TestEveryRouteReachesItsOwnFunction walks route → integration → function.
func TestEveryRouteReachesItsOwnFunction(t *testing.T) {
	s := defaults(t)
	target := map[string]string{} // route key → function logical id
	for _, r := range s.ofType("AWS::ApiGatewayV2::Route") {
		p := s.resources[r].Properties
		for _, i := range s.ofType("AWS::ApiGatewayV2::Integration") {
			if refersTo(p["Target"], i) {
				for _, fn := range s.ofType("AWS::Lambda::Function") {
					if refersTo(s.resources[i].Properties["IntegrationUri"], fn) {
						target[p["RouteKey"].(string)] = fn
					}
				}
			}
		}
	}
	want := 0
	for _, f := range Functions {
		fn := s.logicalID(t, s.stack.Functions[f.Name].FunctionName())
		for _, path := range f.Routes() {
			key := "ANY " + path
			if path == "$default" {
				key = path
			}
			want++
			if target[key] != fn {
				t.Errorf("route %q reaches %q, want %s (%s)", key, target[key], f.Name, fn)
			}
		}
	}
	if len(target) != want {
		t.Errorf("%d routes reach a function, want %d", len(target), want)
	}
	must(t, func() {
		s.template.ResourcePropertiesCountIs(jsii.String("AWS::ApiGatewayV2::Integration"),
			map[string]any{"IntegrationType": "AWS_PROXY", "PayloadFormatVersion": "2.0"}, jsii.Number(float64(len(s.ofType("AWS::ApiGatewayV2::Integration")))))
	})
}

// wantEnv is the contract with the code of every function deployed today,
// by name wherever it is declared (its group's folder or the kernel's
// list), written out by hand so that a change to the wiring, to a shared
// set of uses or to a declaration cannot silently change what an existing
// function is told. A function added since has no row: it is held to what
// its declared uses mean (expected).
var wantEnv = func() map[string][]string {
	base := []string{"LOG_LEVEL", "STAGE"}
	group := append(slices.Clone(base), "TABLE_NAME", "WEBHOOK_QUEUE_URL")
	// Every HTTP group holds the envelope key (its idempotency fingerprints).
	http := append(slices.Clone(group), "KMS_KEY_ID")
	with := func(names ...string) []string { return append(slices.Clone(http), names...) }
	wallet := with("WALLETS_QUEUE_URL", "LIFI_BASE_URL", "LIFI_API_KEY")
	return map[string][]string{
		"public":          append(slices.Clone(base), "ARCHIVE_SIGNING_SECRET_ARN"),
		"keys":            with("CREDIT_TOKEN_SECRET_ARN"),
		"services":        http,
		"credits":         with("X402_NETWORK", "X402_ASSET", "X402_PAY_TO", "X402_FACILITATOR_URL", "X402_RPC_URL"),
		"projects":        http,
		"files":           with("FILES_BUCKET"),
		"connections":     http,
		"databases":       with("ARCHIVES_BUCKET", "ARCHIVE_SIGNING_SECRET_ARN", "DATABASES_QUEUE_URL"),
		"wallets":         wallet,
		"trading":         http,
		"swaps":           wallet,
		"runs":            with("RUNS_QUEUE_URL", "ARTIFACTS_BUCKET"),
		"approvals":       http,
		"artifacts":       with("ARTIFACTS_BUCKET"),
		"webhooks":        http,
		"mcp":             http,
		"webhook-worker":  append(slices.Clone(base), "TABLE_NAME", "WEBHOOK_QUEUE_URL", "KMS_KEY_ID"),
		"run-worker":      append(slices.Clone(base), "TABLE_NAME", "RUNS_QUEUE_URL", "ARTIFACTS_BUCKET", "WEBHOOK_QUEUE_URL", "KMS_KEY_ID"),
		"file-sweeper":    append(slices.Clone(base), "TABLE_NAME", "FILES_BUCKET"),
		"hold-sweeper":    append(slices.Clone(base), "TABLE_NAME"),
		"trading-recheck": group,
		"webhook-outbox":  group,
		"databases-worker": append(slices.Clone(base), "TABLE_NAME", "DATABASES_QUEUE_URL", "ARCHIVES_BUCKET",
			"ARCHIVE_SIGNING_SECRET_ARN", "WEBHOOK_QUEUE_URL"),
		"wallets-worker":  wallet,
		"wallets-recheck": wallet,
		"audit-rollup":    append(slices.Clone(base), "TABLE_NAME"),
		"audit-ingest":    append(slices.Clone(base), "TABLE_NAME"),
	}
}()

func TestFunctionsAreToldOnlyAboutWhatTheyUse(t *testing.T) {
	s := defaults(t)
	st := s.stack
	refs := map[string]*string{ // variable → the resource its value must name
		"TABLE_NAME":                 st.Table.TableName(),
		"FILES_BUCKET":               st.FilesBucket.BucketName(),
		"ARCHIVES_BUCKET":            st.ArchivesBucket.BucketName(),
		"ARTIFACTS_BUCKET":           st.ArtifactsBucket.BucketName(),
		"KMS_KEY_ID":                 st.EnvelopeKey.KeyId(),
		"CREDIT_TOKEN_SECRET_ARN":    st.CreditTokenSecret.SecretArn(),
		"ARCHIVE_SIGNING_SECRET_ARN": st.ArchiveSecret.SecretArn(),
	}
	for _, q := range Queues {
		refs[awsenv.QueueURLEnv(q)] = st.Queues[q.Name].QueueName()
	}
	literal := map[string]any{
		"STAGE": "dev", "LOG_LEVEL": "info",
		"X402_NETWORK": "eip155:84532", "X402_ASSET": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		"X402_PAY_TO": "", "X402_FACILITATOR_URL": "https://x402.org/facilitator", "X402_RPC_URL": "",
		"LIFI_BASE_URL": "https://li.quest/v1", "LIFI_API_KEY": "",
	}
	for _, f := range Functions {
		id := s.logicalID(t, st.Functions[f.Name].FunctionName())
		env, _ := s.resources[id].Properties["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		got := slices.Sorted(maps.Keys(vars))
		want, _ := expected(t, f)
		if !slices.Equal(got, want) {
			t.Errorf("%s: environment %v, want %v", f.Name, got, want)
		}
		for k, v := range vars {
			if ref, ok := refs[k]; ok {
				if !refersTo(v, s.logicalID(t, ref)) {
					t.Errorf("%s: %s = %v, want a reference to %s", f.Name, k, v, s.logicalID(t, ref))
				}
			} else if v != literal[k] {
				t.Errorf("%s: %s = %v, want %q", f.Name, k, v, literal[k])
			}
		}
	}
}

// wantAccess is, per function deployed today (by name, as wantEnv), every
// resource its role may touch and how (resource:level): its least
// privilege, which must not change unnoticed. A function added since is
// held to what its declared uses mean (expected).
var wantAccess = func() map[string][]string {
	group := []string{"Table:rw", "WebhookQueue:send"}
	http := append(slices.Clone(group), "EnvelopeKey:encrypt-decrypt")
	with := func(more ...string) []string { return append(slices.Clone(http), more...) }
	wallet := with("WalletsQueue:send")
	return map[string][]string{
		"public":           {"ArchiveSigningSeed:read"},
		"keys":             with("CreditTokenSeed:read"),
		"services":         http,
		"credits":          http,
		"projects":         http,
		"files":            with("FilesBucket:rw"),
		"connections":      http,
		"databases":        with("ArchivesBucket:rw", "ArchiveSigningSeed:read", "DatabasesQueue:send"),
		"wallets":          wallet,
		"trading":          http,
		"swaps":            wallet,
		"runs":             with("RunsQueue:send", "ArtifactsBucket:r"),
		"approvals":        http,
		"artifacts":        with("ArtifactsBucket:r"),
		"webhooks":         http,
		"mcp":              http,
		"webhook-worker":   {"Table:rw", "WebhookQueue:consume", "EnvelopeKey:encrypt-decrypt"},
		"run-worker":       {"Table:rw", "RunsQueue:consume", "ArtifactsBucket:rw", "WebhookQueue:send", "EnvelopeKey:encrypt-decrypt"},
		"file-sweeper":     {"Table:rw", "FilesBucket:rw"},
		"hold-sweeper":     {"Table:rw"},
		"trading-recheck":  group,
		"webhook-outbox":   group,
		"databases-worker": {"Table:rw", "DatabasesQueue:consume", "ArchivesBucket:rw", "ArchiveSigningSeed:read", "WebhookQueue:send"},
		"wallets-worker":   append(slices.Clone(wallet), "WalletsQueue:consume"),
		"wallets-recheck":  wallet,
		"audit-rollup":     {"Table:rw", "Table:stream", "AuditRollupDLQ:send"},
		"audit-ingest":     {"Table:rw", "AuditIngestDLQ:send"},
	}
}()

func TestFunctionsMayTouchOnlyWhatTheyUse(t *testing.T) {
	s := defaults(t)
	st := s.stack
	named := map[string]string{ // logical id → name used in wantAccess
		s.logicalID(t, st.Table.TableName()):             "Table",
		s.logicalID(t, st.FilesBucket.BucketName()):      "FilesBucket",
		s.logicalID(t, st.ArchivesBucket.BucketName()):   "ArchivesBucket",
		s.logicalID(t, st.ArtifactsBucket.BucketName()):  "ArtifactsBucket",
		s.logicalID(t, st.AuditRollupDLQ.QueueName()):    "AuditRollupDLQ",
		s.logicalID(t, st.AuditIngestDLQ.QueueName()):    "AuditIngestDLQ",
		s.logicalID(t, st.EnvelopeKey.KeyId()):           "EnvelopeKey",
		s.logicalID(t, st.CreditTokenSecret.SecretArn()): "CreditTokenSeed",
		s.logicalID(t, st.ArchiveSecret.SecretArn()):     "ArchiveSigningSeed",
	}
	for _, q := range Queues { // as the stack names them: <Stack>Queue, <Stack>DLQ
		named[s.logicalID(t, st.Queues[q.Name].QueueName())] = q.Stack + "Queue"
		named[s.logicalID(t, st.DLQs[q.Name].QueueName())] = q.Stack + "DLQ"
	}
	for _, f := range Functions {
		fn := st.Functions[f.Name]
		role := s.logicalID(t, fn.Role().RoleName())
		ownLogs := s.logicalID(t, fn.LogGroup().LogGroupName())
		for _, lg := range s.ofType("AWS::Logs::LogGroup") {
			if lg != ownLogs {
				named[lg] = "another function's logs"
			}
		}
		named[ownLogs] = "Logs"

		access := map[string]bool{}
		for _, st := range roleStatements(s, role) {
			actions := strs(st["Action"])
			has := func(a string) bool { return slices.Contains(actions, a) }
			touched := 0
			for id, name := range named {
				if !refersTo(st["Resource"], id) {
					continue
				}
				touched++
				level := "?" + strings.Join(actions, ",")
				switch {
				case name == "Logs" && has("logs:PutLogEvents"):
					level = "write"
				case has("dynamodb:PutItem"), has("s3:PutObject"):
					level = "rw"
				case has("s3:GetObject*"):
					level = "r"
				case has("dynamodb:GetRecords"):
					level = "stream"
				case has("sqs:ReceiveMessage"):
					level = "consume"
				case has("sqs:SendMessage"):
					level = "send"
				case has("kms:GenerateDataKey") && has("kms:Decrypt"):
					level = "encrypt-decrypt"
				case has("secretsmanager:GetSecretValue"):
					level = "read"
				}
				access[name+":"+level] = true
			}
			if !slices.ContainsFunc(actions, func(a string) bool {
				exc := findException("AWS::IAM::Policy", a)
				return exc == nil || !exc.anyResource
			}) {
				continue // actions without resource-level permissions (see wildcardExceptions)
			}
			if touched == 0 {
				t.Errorf("%s: statement on no resource of this stack: %v", f.Name, st)
			}
		}
		_, want := expected(t, f)
		if got := slices.Sorted(maps.Keys(access)); !slices.Equal(got, want) {
			t.Errorf("%s: may touch %v, want %v", f.Name, got, want)
		}
	}
}

// useEnv and useAccess are what each use means, written here apart from the
// stack's wirings so that the stack's translation is checked: the variables
// it passes (the chains' RPC_URL_<id> only with the rpcUrls setting, none
// by default) and what it grants, as TestFunctionsMayTouchOnlyWhatTheyUse
// names access. A queue's two uses follow from its declaration (queueUse).
var (
	useEnv = map[deploy.Use][]string{
		deploy.UseTable: {"TABLE_NAME"}, deploy.UseFiles: {"FILES_BUCKET"}, deploy.UseArchives: {"ARCHIVES_BUCKET"},
		deploy.UseArtifactsRead: {"ARTIFACTS_BUCKET"}, deploy.UseArtifactsWrite: {"ARTIFACTS_BUCKET"},
		deploy.UseKMS: {"KMS_KEY_ID"}, deploy.UseCreditSecret: {"CREDIT_TOKEN_SECRET_ARN"},
		deploy.UseX402:          {"X402_NETWORK", "X402_ASSET", "X402_PAY_TO", "X402_FACILITATOR_URL", "X402_RPC_URL"},
		deploy.UseArchiveSecret: {"ARCHIVE_SIGNING_SECRET_ARN"}, deploy.UseLiFi: {"LIFI_BASE_URL", "LIFI_API_KEY"},
		deploy.UseChains: nil, deploy.ConsumeAuditStream: nil, deploy.IngestAuditLogs: nil,
	}
	useAccess = map[deploy.Use][]string{
		deploy.UseTable: {"Table:rw"}, deploy.UseFiles: {"FilesBucket:rw"}, deploy.UseArchives: {"ArchivesBucket:rw"},
		deploy.UseArtifactsRead: {"ArtifactsBucket:r"}, deploy.UseArtifactsWrite: {"ArtifactsBucket:rw"},
		deploy.UseKMS: {"EnvelopeKey:encrypt-decrypt"}, deploy.UseCreditSecret: {"CreditTokenSeed:read"},
		deploy.UseArchiveSecret: {"ArchiveSigningSeed:read"}, deploy.UseX402: nil, deploy.UseLiFi: nil, deploy.UseChains: nil,
		deploy.ConsumeAuditStream: {"Table:stream", "AuditRollupDLQ:send"}, deploy.IngestAuditLogs: {"AuditIngestDLQ:send"},
	}
)

// queueUse is what use means if it is one of a declared queue's: its URL's
// variable, and sending to or being triggered by it.
func queueUse(use deploy.Use) (env, access []string, ok bool) {
	for _, q := range Queues {
		switch use {
		case deploy.Send(q):
			return []string{q.Env + "_QUEUE_URL"}, []string{q.Stack + "Queue:send"}, true
		case deploy.Consume(q):
			return []string{q.Env + "_QUEUE_URL"}, []string{q.Stack + "Queue:consume"}, true
		}
	}
	return nil, nil, false
}

// meaning is the environment and access f's declared uses imply, sorted,
// with what every function has (STAGE, LOG_LEVEL, its own logs).
func meaning(t *testing.T, f Function) (env, access []string) {
	t.Helper()
	env, access = []string{"LOG_LEVEL", "STAGE"}, []string{"Logs:write"}
	for _, use := range f.Uses {
		e, okEnv := useEnv[use]
		a, okAccess := useAccess[use]
		if qe, qa, ok := queueUse(use); ok {
			e, a, okEnv, okAccess = qe, qa, true, true
		}
		if !okEnv || !okAccess {
			t.Errorf("%s: use %q means nothing to this test; add it to useEnv and useAccess", f.Name, use)
		}
		env, access = append(env, e...), append(access, a...)
	}
	return slices.Compact(slices.Sorted(slices.Values(env))), slices.Compact(slices.Sorted(slices.Values(access)))
}

// expected is what f must be told and may touch: its golden rows when it
// has them, else what its declared uses mean.
func expected(t *testing.T, f Function) (env, access []string) {
	t.Helper()
	env, access = meaning(t, f)
	if golden, ok := wantEnv[f.Name]; ok {
		env = slices.Sorted(slices.Values(golden))
	}
	if golden, ok := wantAccess[f.Name]; ok {
		access = append([]string{"Logs:write"}, golden...)
		sort.Strings(access)
	}
	return env, access
}

// TestEveryGoldenRowNamesADeployedFunctionItsUsesReproduce: each golden
// row names a function the stack deploys, has its twin in the other table,
// and is what that function's declared uses mean by useEnv and useAccess;
// so a declaration moved, renamed or changed without its rows fails here,
// and the meaning a new function is held to is itself checked against
// hand-written rows.
func TestEveryGoldenRowNamesADeployedFunctionItsUsesReproduce(t *testing.T) {
	deployed := map[string]Function{}
	for _, f := range Functions {
		deployed[f.Name] = f
	}
	for _, name := range slices.Sorted(maps.Keys(wantEnv)) {
		if _, ok := wantAccess[name]; !ok {
			t.Errorf("%s: wantEnv has a row, wantAccess none", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(wantAccess)) {
		f, ok := deployed[name]
		if !ok {
			t.Errorf("golden row %s names no deployed function", name)
			continue
		}
		env, access := meaning(t, f)
		golden, ok := wantEnv[name]
		if !ok {
			t.Errorf("%s: wantAccess has a row, wantEnv none", name)
		} else if want := slices.Sorted(slices.Values(golden)); !slices.Equal(env, want) {
			t.Errorf("%s: its uses mean the environment %v, its golden row is %v", name, env, want)
		}
		if want := slices.Sorted(slices.Values(append([]string{"Logs:write"}, wantAccess[name]...))); !slices.Equal(access, want) {
			t.Errorf("%s: its uses mean the access %v, its golden row is %v", name, access, want)
		}
	}
}

// wildcardException is a wildcard CDK itself writes and this stack accepts.
type wildcardException struct {
	resourceType string
	action       string
	// anyResource allows Resource "*" for this action.
	anyResource bool
	why         string
}

// wildcardExceptions is the complete list of wildcards allowed in an Allow
// statement. Anything else with a "*" action or resource fails the test.
var wildcardExceptions = []wildcardException{
	{"AWS::KMS::Key", "kms:*", true,
		"CDK's default key policy lets the account administer its key through IAM; in a key policy, Resource * means this key"},
	{"AWS::IAM::Policy", "s3:GetObject*", false, "Bucket.grantRead/grantReadWrite; on one bucket's ARN only"},
	{"AWS::IAM::Policy", "s3:GetBucket*", false, "Bucket.grantRead/grantReadWrite; on one bucket's ARN only"},
	{"AWS::IAM::Policy", "s3:List*", false, "Bucket.grantRead/grantReadWrite; on one bucket's ARN only"},
	{"AWS::IAM::Policy", "s3:DeleteObject*", false, "Bucket.grantReadWrite; on one bucket's objects only"},
	{"AWS::IAM::Policy", "s3:Abort*", false, "Bucket.grantReadWrite (abort multipart uploads); one bucket only"},
	{"AWS::IAM::Policy", "xray:PutTraceSegments", true, "active tracing: X-Ray has no resource-level permissions"},
	{"AWS::IAM::Policy", "xray:PutTelemetryRecords", true, "active tracing: X-Ray has no resource-level permissions"},
	{"AWS::IAM::Policy", "dynamodb:ListStreams", true,
		"DynamoEventSource (audit rollup): ListStreams has no resource-level permission; reading records is granted on the table's stream only"},
}

// TestNoPolicyAllowsWildcardsBeyondWhatCDKNeeds walks every policy document
// in the template: identity policies, inline role policies, bucket, queue
// and key policies. Deny statements may be broad (they only take away).
func TestNoPolicyAllowsWildcardsBeyondWhatCDKNeeds(t *testing.T) {
	s := defaults(t)
	walked := 0
	for _, id := range slices.Sorted(maps.Keys(s.resources)) {
		r := s.resources[id]
		var docs []any
		switch r.Type {
		case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::S3::BucketPolicy", "AWS::SQS::QueuePolicy":
			docs = append(docs, r.Properties["PolicyDocument"])
		case "AWS::KMS::Key":
			docs = append(docs, r.Properties["KeyPolicy"])
		case "AWS::IAM::Role":
			if arns := r.Properties["ManagedPolicyArns"]; arns != nil {
				t.Errorf("%s: managed policies %v; grant with Grant* methods instead", id, arns)
			}
			for _, p := range asList(r.Properties["Policies"]) {
				docs = append(docs, p.(map[string]any)["PolicyDocument"])
			}
		}
		for _, doc := range docs {
			for _, st := range statements(doc) {
				walked++
				if st["Effect"] != "Allow" {
					continue
				}
				if st["NotAction"] != nil || st["NotResource"] != nil {
					t.Errorf("%s: Allow with NotAction/NotResource: %v", id, st)
				}
				anyResource := slices.Contains(strs(st["Resource"]), "*")
				for _, a := range strs(st["Action"]) {
					exc := findException(r.Type, a)
					switch {
					case strings.Contains(a, "*") && exc == nil:
						t.Errorf("%s: Allow %q is a wildcard action not in wildcardExceptions", id, a)
					case anyResource && (exc == nil || !exc.anyResource):
						t.Errorf("%s: Allow %q on Resource * is not in wildcardExceptions", id, a)
					}
				}
			}
		}
	}
	if walked < len(Functions) {
		t.Fatalf("walked %d statements; the walk found too few policies", walked)
	}
}

func findException(resourceType, action string) *wildcardException {
	for i, e := range wildcardExceptions {
		if e.resourceType == resourceType && e.action == action {
			return &wildcardExceptions[i]
		}
	}
	return nil
}

func TestEveryFunctionLogsToItsOwnGroupWithRetention(t *testing.T) {
	s := defaults(t)
	seen := map[string]bool{}
	for _, f := range Functions {
		fn := s.logicalID(t, s.stack.Functions[f.Name].FunctionName())
		cfg, _ := s.resources[fn].Properties["LoggingConfig"].(map[string]any)
		group, _ := cfg["LogGroup"].(map[string]any)["Ref"].(string)
		if s.resources[group].Type != "AWS::Logs::LogGroup" || seen[group] {
			t.Errorf("%s: log group %q is missing or shared", f.Name, group)
			continue
		}
		seen[group] = true
		if days := s.resources[group].Properties["RetentionInDays"]; days != float64(30) {
			t.Errorf("%s: retention %v days, want the default 30", f.Name, days)
		}
	}
}

func TestAlarmsWatchDeadLettersFunctionsAndTheAPI(t *testing.T) {
	s := defaults(t)
	alarm := func(namespace, metric, statistic, dimension string, value any) {
		t.Helper()
		must(t, func() {
			s.template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
				"Namespace":          namespace,
				"MetricName":         metric,
				"Statistic":          statistic,
				"Dimensions":         []any{map[string]any{"Name": dimension, "Value": value}},
				"Threshold":          1,
				"ComparisonOperator": "GreaterThanOrEqualToThreshold",
				"TreatMissingData":   "notBreaching",
			})
		})
	}
	for _, dlq := range s.stack.DLQs {
		alarm("AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum", "QueueName", s.stack.Resolve(dlq.QueueName()))
	}
	for _, f := range Functions {
		fn := map[string]any{"Ref": s.logicalID(t, s.stack.Functions[f.Name].FunctionName())}
		alarm("AWS/Lambda", "Errors", "Sum", "FunctionName", fn)
		alarm("AWS/Lambda", "Throttles", "Sum", "FunctionName", fn)
	}
	alarm("AWS/ApiGateway", "5xx", "Sum", "ApiId", map[string]any{"Ref": s.logicalID(t, s.stack.API.ApiId())})
	must(t, func() {
		s.template.AllResourcesProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"AlarmActions": assertions.Match_Absent()})
	})
}

func TestOutputsGiveTheBaseURLAndTheMCPURL(t *testing.T) {
	s := defaults(t)
	api := s.logicalID(t, s.stack.API.ApiId())
	for name, suffix := range map[string]string{"BaseUrl": "/v1", "McpUrl": "/mcp"} {
		must(t, func() {
			s.template.HasOutput(jsii.String(name), map[string]any{"Value": map[string]any{
				"Fn::Join": []any{"", []any{map[string]any{"Fn::GetAtt": []any{api, "ApiEndpoint"}}, suffix}},
			}})
		})
	}
	for _, name := range []string{"TableName", "CreditTokenSecretArn"} {
		must(t, func() { s.template.HasOutput(jsii.String(name), map[string]any{"Value": assertions.Match_AnyValue()}) })
	}
}

// stateful are the resources the retain setting protects.
var stateful = []string{
	"AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::KMS::Key", "AWS::SecretsManager::Secret", "AWS::Logs::LogGroup",
}

func TestDataOutlivesTheStackByDefault(t *testing.T) {
	s := defaults(t)
	for _, typ := range stateful {
		must(t, func() {
			s.template.AllResources(jsii.String(typ), map[string]any{"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"})
		})
	}
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionProtectionEnabled": true})
	})
}

// TestSettingsShapeTheStack synthesizes a disposable stage with every
// setting changed and checks each one lands where it should.
func TestSettingsShapeTheStack(t *testing.T) {
	const topic = "arn:aws:sns:eu-west-1:123456789012:ops"
	s := synth(t, map[string]any{
		"stage": "qa", "logLevel": "debug", "logRetentionDays": 7, "retain": false, "alarmTopicArn": topic,
		"x402Network": "eip155:8453", "x402Asset": "0xasset", "x402PayTo": "0xpayee", "x402FacilitatorUrl": "https://facilitator.test",
		"rpcUrls": "1=https://eth.test/v2/k,8453=wss://base.test", "lifiBaseUrl": "https://lifi.test/v1", "lifiApiKey": "lifi-key",
	})
	if got := *s.stack.StackName(); got != "PlatformApi-qa" {
		t.Errorf("stack name %q, want PlatformApi-qa", got)
	}
	for _, typ := range stateful {
		must(t, func() { s.template.AllResources(jsii.String(typ), map[string]any{"DeletionPolicy": "Delete"}) })
	}
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionProtectionEnabled": false})
		s.template.HasResourceProperties(jsii.String("AWS::KMS::Key"), map[string]any{"PendingWindowInDays": 7})
		s.template.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": 7})
		s.template.AllResourcesProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"AlarmActions": []any{topic}})
		s.template.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{"STAGE": "qa", "LOG_LEVEL": "debug"})},
		})
		s.template.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": assertions.Match_ObjectLike(&map[string]any{
				"X402_NETWORK": "eip155:8453", "X402_ASSET": "0xasset", "X402_PAY_TO": "0xpayee", "X402_FACILITATOR_URL": "https://facilitator.test",
			})},
		})
	})
	// The chains and the swap router reach exactly the functions that use
	// them; of those with golden rows, the ones that move wallet funds.
	var chains, lifi []string
	for _, f := range Functions {
		id := s.logicalID(t, s.stack.Functions[f.Name].FunctionName())
		env, _ := s.resources[id].Properties["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		if vars["RPC_URL_1"] != nil || vars["RPC_URL_8453"] != nil {
			chains = append(chains, f.Name)
			if vars["RPC_URL_1"] != "https://eth.test/v2/k" || vars["RPC_URL_8453"] != "wss://base.test" {
				t.Errorf("%s: RPC_URL_1 %v, RPC_URL_8453 %v", f.Name, vars["RPC_URL_1"], vars["RPC_URL_8453"])
			}
		}
		if vars["LIFI_BASE_URL"] != nil || vars["LIFI_API_KEY"] != nil {
			lifi = append(lifi, f.Name)
			if vars["LIFI_BASE_URL"] != "https://lifi.test/v1" || vars["LIFI_API_KEY"] != "lifi-key" {
				t.Errorf("%s: LIFI_BASE_URL %v, LIFI_API_KEY %v", f.Name, vars["LIFI_BASE_URL"], vars["LIFI_API_KEY"])
			}
		}
	}
	for use, reached := range map[deploy.Use][]string{deploy.UseChains: chains, deploy.UseLiFi: lifi} {
		var want, here []string
		for _, f := range Functions {
			if f.Uses.Has(use) {
				want = append(want, f.Name)
			}
		}
		for _, f := range Functions {
			if _, golden := wantAccess[f.Name]; golden && f.Uses.Has(use) {
				here = append(here, f.Name)
			}
		}
		if got := slices.Sorted(slices.Values(reached)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("%s reaches %v, want the functions that use it, %v", use, got, want)
		}
		if golden := []string{"swaps", "wallets", "wallets-recheck", "wallets-worker"}; !slices.Equal(slices.Sorted(slices.Values(here)), golden) {
			t.Errorf("of the functions with golden rows, %v use %s, want %v", here, use, golden)
		}
	}
}

func roleStatements(s *synthesized, role string) []map[string]any {
	var out []map[string]any
	for _, id := range s.ofType("AWS::IAM::Policy") {
		p := s.resources[id].Properties
		if refersTo(p["Roles"], role) {
			out = append(out, statements(p["PolicyDocument"])...)
		}
	}
	return out
}

func statements(doc any) []map[string]any {
	d, _ := doc.(map[string]any)
	var out []map[string]any
	for _, st := range asList(d["Statement"]) {
		if m, ok := st.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func asList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case nil:
		return nil
	default:
		return []any{x}
	}
}

// TestTheAuditRollupReadsOnlyAuditInsertsFromTheTableStream: the stream
// carries new images, the mapping passes only inserts of audit events, is
// retried a bounded number of times from the first uncounted record, and
// then parks the batch in a dead-letter queue with an alarm.
func TestTheAuditRollupReadsOnlyAuditInsertsFromTheTableStream(t *testing.T) {
	s := defaults(t)
	st := s.stack
	table := s.logicalID(t, st.Table.TableName())
	dlq := s.logicalID(t, st.AuditRollupDLQ.QueueName())
	fn := s.logicalID(t, st.Functions["audit-rollup"].FunctionName())
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"StreamSpecification": map[string]any{"StreamViewType": "NEW_IMAGE"},
		})
	})
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fn},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{table, "StreamArn"}},
			"StartingPosition":      "TRIM_HORIZON",
			"BatchSize":             1000,
			"MaximumRetryAttempts":  auditRetries,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"DestinationConfig":     map[string]any{"OnFailure": map[string]any{"Destination": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}}},
			"FilterCriteria": map[string]any{"Filters": []any{map[string]any{
				"Pattern": `{"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"aud#"}]}}},"eventName":["INSERT"]}`,
			}}},
		})
	})
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"MetricName": "ApproximateNumberOfMessagesVisible",
			"Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{dlq, "QueueName"}}}},
		})
	})
}

// TestEveryHTTPFunctionShipsItsAuditEventsToTheIngest: each HTTP
// function's log group passes exactly the audit event lines to the ingest
// function, whose failed deliveries are retried, then parked in a
// dead-letter queue with an alarm.
func TestEveryHTTPFunctionShipsItsAuditEventsToTheIngest(t *testing.T) {
	s := defaults(t)
	st := s.stack
	ingest := s.logicalID(t, st.Functions["audit-ingest"].FunctionName())
	dlq := s.logicalID(t, st.AuditIngestDLQ.QueueName())
	http := 0
	for _, f := range Functions {
		if len(f.Routes()) == 0 {
			continue
		}
		http++
		logs := s.logicalID(t, st.Functions[f.Name].LogGroup().LogGroupName())
		must(t, func() {
			s.template.HasResourceProperties(jsii.String("AWS::Logs::SubscriptionFilter"), map[string]any{
				"LogGroupName":   map[string]any{"Ref": logs},
				"FilterPattern":  audit.ShipFilterPattern,
				"DestinationArn": map[string]any{"Fn::GetAtt": []any{ingest, "Arn"}},
			})
		})
	}
	if n := len(s.ofType("AWS::Logs::SubscriptionFilter")); n != http {
		t.Errorf("%d subscription filters, want one per HTTP function (%d)", n, http)
	}
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), map[string]any{
			"FunctionName":         map[string]any{"Ref": ingest},
			"MaximumRetryAttempts": auditIngestRetries,
			"DestinationConfig":    map[string]any{"OnFailure": map[string]any{"Destination": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}}},
		})
	})
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"MetricName": "ApproximateNumberOfMessagesVisible",
			"Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{dlq, "QueueName"}}}},
		})
	})
}
