package stacks

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/base/emf"
)

// Tracing. Every function has X-Ray active tracing (see addFunction):
// Lambda records the invocation and function segments, with cold starts,
// without a line of code. The HTTP API has no X-Ray switch (API Gateway
// traces REST APIs only), so a trace starts at the function; the request's
// X-Request-Id, its Lambda request id and its trace id are on its log line,
// which is how one gets from a client's request id to its trace. Subsegments
// for each AWS SDK call would need the X-Ray SDK or OpenTelemetry (the ADOT
// layer) in every bootstrap: megabytes and cold-start time per function for
// what the log line's latency and the DynamoDB/SQS/KMS metrics mostly tell.

// Alarm thresholds beyond "the first occurrence" (see alarm).
const (
	// latencyAlarmShare: a function whose p99 duration stays above this
	// share of its timeout for alarmPeriods is about to time out.
	latencyAlarmShare = 0.8
	// apiLatencyP99 is the API's p99 (API Gateway Latency: the whole
	// request) above which, sustained, clients notice: invokes may take
	// up to 29 s, so this is well above an ordinary call.
	apiLatencyP99 = 10 * time.Second
	// alarmPeriods of 5 minutes: latency and age alarms want a trend,
	// not one slow request.
	alarmPeriods = 3
	// iteratorAgeAlarm: the usage rollup lags the audit events by more
	// than this; /usage is stale.
	iteratorAgeAlarm = 15 * time.Minute
	// dynamoThrottles and dynamoSystemErrors per 5 minutes, sustained over
	// two periods: the SDK retries both, so a few are invisible to
	// clients; more mean failed requests.
	dynamoThrottles    = 10
	dynamoSystemErrors = 5
	// kmsRequestsPerSecond is 80% of the smallest regional quota for
	// symmetric cryptographic requests (5,500/s, shared by Decrypt and
	// GenerateDataKey across the account); past it KMS throttles.
	kmsRequestsPerSecond = 4400
)

// tableOperations are the DynamoDB operations the store issues
// (shared/adapters/store/dynamostore); an alarm's metric math sums at most ten.
var tableOperations = []awsdynamodb.Operation{
	awsdynamodb.Operation_GET_ITEM, awsdynamodb.Operation_BATCH_GET_ITEM, awsdynamodb.Operation_QUERY,
	awsdynamodb.Operation_PUT_ITEM, awsdynamodb.Operation_UPDATE_ITEM, awsdynamodb.Operation_DELETE_ITEM,
	awsdynamodb.Operation_TRANSACT_WRITE_ITEMS,
}

// addObservability adds the alarms that need the whole stack and the
// dashboard. Per-function alarms are made with the function (addFunction).
func (s *PlatformStack) addObservability() {
	for _, q := range Queues {
		s.alarmAt(q.Stack+"QueueAge", s.Queues[q.Name].MetricApproximateAgeOfOldestMessage(period("Maximum")), q.MaxAge.Seconds(), alarmPeriods,
			fmt.Sprintf("Queue age: %s.", q.Stuck))
	}
	s.alarmAt("ApiLatencyP99", s.API.MetricLatency(period("p99")), float64(apiLatencyP99.Milliseconds()), alarmPeriods,
		fmt.Sprintf("The HTTP API's p99 latency stayed above %v for %d periods of 5 minutes.", apiLatencyP99, alarmPeriods))
	for _, f := range Functions {
		if f.Uses.Has(deploy.ConsumeAuditStream) {
			s.alarmAt(f.Name+"-iterator-age", s.Functions[f.Name].Metric(jsii.String("IteratorAge"), period("Maximum")),
				float64(iteratorAgeAlarm.Milliseconds()), alarmPeriods,
				fmt.Sprintf("The %s function lags the table's stream by more than %v: usage counters are stale.", f.Name, iteratorAgeAlarm))
		}
	}
	ops := &awsdynamodb.OperationsMetricOptions{Operations: &tableOperations, Period: awscdk.Duration_Minutes(jsii.Number(5))}
	s.alarmAt("TableThrottles", s.Table.MetricThrottledRequestsForOperations(ops), dynamoThrottles, 2,
		fmt.Sprintf("DynamoDB throttled at least %d requests in each of two 5-minute periods (a hot partition or an account limit).", dynamoThrottles))
	s.alarmAt("TableSystemErrors", s.Table.MetricSystemErrorsForOperations(&awsdynamodb.SystemErrorsForOperationsMetricOptions{
		Operations: &tableOperations, Period: awscdk.Duration_Minutes(jsii.Number(5)),
	}), dynamoSystemErrors, 2,
		fmt.Sprintf("DynamoDB answered at least %d internal errors in each of two 5-minute periods.", dynamoSystemErrors))
	s.alarmAt("KmsRequestRate", kmsRate(), kmsRequestsPerSecond, alarmPeriods,
		fmt.Sprintf("The account's KMS Decrypt and GenerateDataKey rate passed %d/s, 80%% of the smallest regional quota: KMS throttles next.", kmsRequestsPerSecond))
	s.addDashboard()
}

// kmsRate is the account's rate of the cryptographic requests the envelope
// sealer makes, per second. KMS publishes no throttle metric; AWS/Usage
// counts the calls that the quota applies to.
func kmsRate() awscloudwatch.IMetric {
	usage := func(op string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/Usage"), MetricName: jsii.String("CallCount"),
			DimensionsMap: &map[string]*string{"Service": jsii.String("KMS"), "Type": jsii.String("API"), "Resource": jsii.String(op), "Class": jsii.String("None")},
			Statistic:     jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5)),
		})
	}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String("(decrypt + generate) / PERIOD(decrypt)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{"decrypt": usage("Decrypt"), "generate": usage("GenerateDataKey")},
		Label:        jsii.String("KMS requests/s"),
		Period:       awscdk.Duration_Minutes(jsii.Number(5)),
	})
}

// addDashboard draws, on one page, what the alarms watch and what explains
// them: the API, latency per group, errors and throttles per function, the
// queues, the table, KMS, and the application's own metrics (shared/base/emf).
func (s *PlatformStack) addDashboard() {
	graph := func(title string, width float64, left ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Width: jsii.Number(width), Height: jsii.Number(6), Left: &left})
	}
	var httpFns, workerFns []Function
	for _, f := range Functions {
		if len(f.Routes()) > 0 {
			httpFns = append(httpFns, f)
		} else {
			workerFns = append(workerFns, f)
		}
	}
	perFunction := func(fns []Function, m func(f Function) awscloudwatch.IMetric) []awscloudwatch.IMetric {
		out := make([]awscloudwatch.IMetric, 0, len(fns))
		for _, f := range fns {
			out = append(out, m(f))
		}
		return out
	}
	labelled := func(f Function, opts *awscloudwatch.MetricOptions) *awscloudwatch.MetricOptions {
		o := *opts
		o.Label = jsii.String(f.Name)
		return &o
	}
	duration := func(f Function) awscloudwatch.IMetric {
		return s.Functions[f.Name].MetricDuration(labelled(f, period("p99")))
	}
	app := func(name, statistic string, dims map[string]string, label string) awscloudwatch.IMetric {
		dm := map[string]*string{}
		for k, v := range dims {
			dm[k] = jsii.String(v)
		}
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(emf.Namespace), MetricName: jsii.String(name),
			DimensionsMap: &dm, Statistic: jsii.String(statistic), Period: awscdk.Duration_Minutes(jsii.Number(5)), Label: jsii.String(label)})
	}
	var groupLatency, groupErrors []awscloudwatch.IMetric
	for _, f := range httpFns {
		groupLatency = append(groupLatency, app("Latency", "p99", map[string]string{"Group": f.Name}, f.Name))
		groupErrors = append(groupErrors, app("Errors5xx", "Sum", map[string]string{"Group": f.Name}, f.Name))
	}
	var ages, dlqs []awscloudwatch.IMetric
	for _, q := range Queues {
		ages = append(ages, s.Queues[q.Name].MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Label: jsii.String(q.Stack + "QueueAge")}))
	}
	type dlqRow struct {
		name string
		q    awssqs.Queue
	}
	var dlqRows []dlqRow
	for _, q := range Queues {
		dlqRows = append(dlqRows, dlqRow{q.Name, s.DLQs[q.Name]})
	}
	dlqRows = append(dlqRows, dlqRow{"audit rollup", s.AuditRollupDLQ}, dlqRow{"audit ingest", s.AuditIngestDLQ})
	for _, q := range dlqRows {
		dlqs = append(dlqs, q.q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Label: jsii.String(q.name)}))
	}
	ops := &awsdynamodb.OperationsMetricOptions{Operations: &tableOperations, Label: jsii.String("throttled requests")}
	worker := func(w string, names ...string) []awscloudwatch.IMetric {
		var out []awscloudwatch.IMetric
		for _, n := range names {
			out = append(out, app(n, "Sum", map[string]string{"Worker": w}, n))
		}
		return out
	}
	rows := [][]awscloudwatch.IWidget{
		{
			graph("API requests, 4xx, 5xx", 8, s.API.MetricCount(period("Sum")), s.API.MetricClientError(period("Sum")), s.API.MetricServerError(period("Sum"))),
			graph("API latency p50 / p99 (ms)", 8, s.API.MetricLatency(period("p50")), s.API.MetricLatency(period("p99"))),
			graph("Refusals: limits, replays (all groups)", 8, app("LimitRefusals", "Sum", nil, "limit refusals"), app("Replays", "Sum", nil, "idempotent replays")),
		},
		{
			graph("Request latency p99 per group (ms, app)", 12, groupLatency...),
			graph("5xx per group (app)", 12, groupErrors...),
		},
		{
			graph("Lambda duration p99, HTTP functions (ms)", 12, perFunction(httpFns, duration)...),
			graph("Lambda duration p99, workers (ms)", 12, perFunction(workerFns, duration)...),
		},
		{
			graph("Lambda errors", 12, perFunction(Functions, func(f Function) awscloudwatch.IMetric {
				return s.Functions[f.Name].MetricErrors(labelled(f, period("Sum")))
			})...),
			graph("Lambda throttles", 12, perFunction(Functions, func(f Function) awscloudwatch.IMetric {
				return s.Functions[f.Name].MetricThrottles(labelled(f, period("Sum")))
			})...),
		},
		{
			graph("Queue age of oldest message (s)", 8, ages...),
			graph("Dead-letter queue depth", 8, dlqs...),
			graph("Webhook deliveries", 8, worker("webhooks", "WebhookDeliveries", "WebhookRetries", "WebhookDeadLettered", "WebhookAbandoned")...),
		},
		{
			graph("Runs", 6, worker("runs", "RunsSucceeded", "RunsFailed", "RunRetries", "RunsCancelled")...),
			// One graph each: both sums name their operations alike.
			graph("DynamoDB throttled requests", 6, s.Table.MetricThrottledRequestsForOperations(ops)),
			graph("DynamoDB system errors", 6, s.Table.MetricSystemErrorsForOperations(&awsdynamodb.SystemErrorsForOperationsMetricOptions{Operations: &tableOperations, Label: jsii.String("system errors")})),
			graph("KMS requests/s (account)", 6, kmsRate()),
		},
	}
	widgets := make([]*[]awscloudwatch.IWidget, 0, len(rows))
	for _, r := range rows {
		widgets = append(widgets, &r)
	}
	awscloudwatch.NewDashboard(s.Stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(StackID(s.settings.Stage)),
		Widgets:       &widgets,
	})
}
