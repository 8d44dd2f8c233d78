package stacks

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/base/emf"
)

// Every function is traced by X-Ray (active tracing) and may write its
// segments; the HTTP API has no tracing switch (API Gateway traces REST
// APIs only), so its stage has none to assert.
func TestEveryFunctionIsTracedByXRay(t *testing.T) {
	s := defaults(t)
	must(t, func() {
		s.template.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"TracingConfig": map[string]any{"Mode": "Active"},
		})
	})
	for _, f := range Functions {
		role := s.logicalID(t, s.stack.Functions[f.Name].Role().RoleName())
		traced := false
		for _, st := range roleStatements(s, role) {
			if slices.Contains(strs(st["Action"]), "xray:PutTraceSegments") {
				traced = true
			}
		}
		if !traced {
			t.Errorf("%s: its role may not write trace segments", f.Name)
		}
	}
	must(t, func() {
		s.template.AllResourcesProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{"StageName": "$default"})
	})
}

// alarmWith asserts an alarm on one metric with a threshold over periods.
func alarmWith(t *testing.T, s *synthesized, namespace, metric, statistic string, dims []any, threshold float64, periods int) {
	t.Helper()
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"Namespace": namespace, "MetricName": metric, "Dimensions": dims,
			"Threshold": threshold, "EvaluationPeriods": periods,
			"ComparisonOperator": "GreaterThanOrEqualToThreshold", "TreatMissingData": "notBreaching",
			statKey(statistic): statistic,
		})
	})
}

// statKey: percentiles are extended statistics in CloudFormation.
func statKey(statistic string) string {
	if strings.HasPrefix(statistic, "p") {
		return "ExtendedStatistic"
	}
	return "Statistic"
}

// Latency, queue age and the usage rollup's lag alarm on a trend (three
// periods), each with a threshold derived from what is legitimate.
func TestLatencyAndAgeAlarmsWatchATrendAboveWhatIsLegitimate(t *testing.T) {
	s := defaults(t)
	for _, f := range Functions {
		fn := []any{map[string]any{"Name": "FunctionName", "Value": map[string]any{"Ref": s.logicalID(t, s.stack.Functions[f.Name].FunctionName())}}}
		alarmWith(t, s, "AWS/Lambda", "Duration", "p99", fn, 0.8*float64(f.Timeout.Milliseconds()), 3)
		if f.Uses.Has(deploy.ConsumeAuditStream) {
			alarmWith(t, s, "AWS/Lambda", "IteratorAge", "Maximum", fn, 15*60*1000, 3)
		}
	}
	alarmWith(t, s, "AWS/ApiGateway", "Latency", "p99", []any{map[string]any{"Name": "ApiId", "Value": map[string]any{"Ref": s.logicalID(t, s.stack.API.ApiId())}}}, 10_000, 3)
	for name, hours := range map[string]float64{"webhooks": 3, "runs": 1, "databases": 4, "wallets": 2} {
		alarmWith(t, s, "AWS/SQS", "ApproximateAgeOfOldestMessage", "Maximum", []any{map[string]any{"Name": "QueueName", "Value": s.stack.Resolve(s.stack.Queues[name].QueueName())}}, hours*3600, 3)
	}
}

// Table throttles and system errors, and the account's KMS request rate,
// alarm through metric math: the sum over the operations the store uses,
// and the calls per second against the quota.
func TestTableAndKMSAlarmsSumTheirMetrics(t *testing.T) {
	s := defaults(t)
	table := s.stack.Resolve(s.stack.Table.TableName())
	for metric, threshold := range map[string]float64{"ThrottledRequests": 10, "SystemErrors": 5} {
		found := false
		for _, id := range s.ofType("AWS::CloudWatch::Alarm") {
			p := s.resources[id].Properties
			ops := 0
			for _, m := range asList(p["Metrics"]) {
				stat, _ := m.(map[string]any)["MetricStat"].(map[string]any)
				if stat == nil {
					continue
				}
				mm := stat["Metric"].(map[string]any)
				if mm["MetricName"] == metric && refersToValue(mm["Dimensions"], table) {
					ops++
				}
			}
			if ops == len(tableOperations) {
				found = true
				if p["Threshold"] != threshold || p["EvaluationPeriods"] != 2.0 {
					t.Errorf("%s alarm: threshold %v over %v periods", metric, p["Threshold"], p["EvaluationPeriods"])
				}
			}
		}
		if !found {
			t.Errorf("no alarm sums %s over the table's %d operations", metric, len(tableOperations))
		}
	}
	must(t, func() {
		s.template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"Threshold": 4400,
			"Metrics": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"Expression": "(decrypt + generate) / PERIOD(decrypt)", "Label": "KMS requests/s",
			})}),
		})
	})
}

func refersToValue(dims any, value any) bool {
	for _, d := range asList(dims) {
		if v := d.(map[string]any)["Value"]; jsonEqual(v, value) {
			return true
		}
	}
	return false
}

// One dashboard shows what the alarms watch, including the application's
// own metrics from the request log lines (namespace emf.Namespace) by group.
func TestTheDashboardShowsWhatTheAlarmsWatch(t *testing.T) {
	s := defaults(t)
	ids := s.ofType("AWS::CloudWatch::Dashboard")
	if len(ids) != 1 {
		t.Fatalf("%d dashboards", len(ids))
	}
	body := flatten(s.resources[ids[0]].Properties["DashboardBody"])
	for _, want := range []string{
		`"AWS/ApiGateway","Count"`, `"AWS/ApiGateway","Latency"`, `"AWS/Lambda","Duration"`, `"AWS/Lambda","Errors"`, `"AWS/Lambda","Throttles"`,
		`"AWS/SQS","ApproximateAgeOfOldestMessage"`, `"AWS/SQS","ApproximateNumberOfMessagesVisible"`,
		`"AWS/DynamoDB","ThrottledRequests"`, `"AWS/DynamoDB","SystemErrors"`, `"AWS/Usage","CallCount"`,
		`"` + emf.Namespace + `","Latency","Group","projects"`, `"` + emf.Namespace + `","WebhookDeadLettered","Worker","webhooks"`,
		`"` + emf.Namespace + `","RunsFailed","Worker","runs"`, `"stat":"p99"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %s", want)
		}
	}
	for _, f := range Functions {
		if !strings.Contains(body, `"label":"`+f.Name+`"`) {
			t.Errorf("dashboard has no series for %s", f.Name)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// flatten renders a template string (a literal or an Fn::Join) as text,
// references in their JSON form.
func flatten(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if j, ok := x["Fn::Join"].([]any); ok {
			var b strings.Builder
			for _, part := range j[1].([]any) {
				b.WriteString(flatten(part))
			}
			return b.String()
		}
	}
	out, _ := json.Marshal(v)
	return string(out)
}
