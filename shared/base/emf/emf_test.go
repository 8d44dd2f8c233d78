package emf_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"platformapi/shared/base/emf"
	"platformapi/shared/base/emf/emftest"
)

// A line written through slog is one JSON object whose `_aws` block names
// only keys the line carries; a metric in two directives is written once.
func TestALineDeclaresOnlyKeysItCarries(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil)).With("requestId", "req_1")
	l := (&emf.Line{}).Dimension("Worker", "webhooks").
		Add(emf.Directive{Dimensions: [][]string{{"Worker"}}, Metrics: []emf.Metric{{Name: "Delivered", Unit: emf.Count, Value: 1}, {Name: "AttemptLatency", Unit: emf.Milliseconds, Value: 42}}}).
		Add(emf.Directive{Dimensions: [][]string{{}}, Metrics: []emf.Metric{{Name: "Delivered", Unit: emf.Count, Value: 1}}}).
		Add(emf.Directive{Dimensions: [][]string{{"Worker"}}})
	log.Info("delivery", l.Attrs(time.UnixMilli(1_800_000_000_000))...)
	lines := emftest.Lines(t, buf.String())
	if len(lines) != 1 {
		t.Fatalf("%d metric lines in %s", len(lines), buf.String())
	}
	line := lines[0]
	if line["Delivered"] != 1.0 || line["AttemptLatency"] != 42.0 || line["Worker"] != "webhooks" || line["requestId"] != "req_1" {
		t.Fatalf("line %v", line)
	}
	aws := line["_aws"].(map[string]any)
	if aws["Timestamp"] != 1.8e12 || len(aws["CloudWatchMetrics"].([]any)) != 2 {
		t.Fatalf("_aws %v: an empty directive must be left out", aws)
	}
	if strings.Count(buf.String(), `"Delivered":`) != 1 {
		t.Fatalf("metric value written twice: %s", buf.String())
	}
}

// A line with no directive adds nothing: no `_aws` block without metrics.
func TestALineWithoutMetricsAddsNothing(t *testing.T) {
	if attrs := (&emf.Line{}).Dimension("Worker", "runs").Attrs(time.Now()); attrs != nil {
		t.Fatalf("attrs %v", attrs)
	}
	dst := []slog.Attr{slog.String("requestId", "req_1")}
	if attrs := (&emf.Line{}).Dimension("Worker", "runs").AppendAttrs(dst, time.Now()); len(attrs) != 1 {
		t.Fatalf("appended %v", attrs)
	}
}

// The checker the other packages' tests rely on refuses what CloudWatch
// would refuse, so a passing check means something.
func TestTheCheckerRefusesLinesCloudWatchWouldNotExtract(t *testing.T) {
	for name, line := range map[string]string{
		"metric without a value":    `{"_aws":{"Timestamp":1800000000000,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[],"Metrics":[{"Name":"A","Unit":"Count"}]}]}}`,
		"dimension without a value": `{"A":1,"_aws":{"Timestamp":1800000000000,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"A","Unit":"Count"}]}]}}`,
		"unknown unit":              `{"A":1,"_aws":{"Timestamp":1800000000000,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[],"Metrics":[{"Name":"A","Unit":"Credits"}]}]}}`,
		"timestamp in seconds":      `{"A":1,"_aws":{"Timestamp":1800000000,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[],"Metrics":[{"Name":"A","Unit":"Count"}]}]}}`,
		"no namespace":              `{"A":1,"_aws":{"Timestamp":1800000000000,"CloudWatchMetrics":[{"Dimensions":[],"Metrics":[{"Name":"A","Unit":"Count"}]}]}}`,
		"no directive":              `{"A":1,"_aws":{"Timestamp":1800000000000,"CloudWatchMetrics":[]}}`,
	} {
		if _, err := emftest.Check(line); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := emftest.Check(`{"A":1,"D":"x","_aws":{"Timestamp":1800000000000,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"],[]],"Metrics":[{"Name":"A","Unit":"Count"}]}]}}`); err != nil {
		t.Fatalf("valid line refused: %v", err)
	}
}

// The hand-written CloudWatchMetrics block is byte for byte what
// encoding/json makes of the same directives as maps and slices, names that
// need escaping included.
func TestTheMetricsBlockEncodesAsEncodingJSONWould(t *testing.T) {
	for name, l := range map[string]*emf.Line{
		"one directive": (&emf.Line{}).Dimension("Group", "keys").
			Add(emf.Directive{Dimensions: [][]string{{"Group", "Operation"}, {"Group"}}, Metrics: []emf.Metric{{Name: "Requests", Unit: emf.Count, Value: 1}, {Name: "Latency", Unit: emf.Milliseconds, Value: 3}}}),
		"no dimensions and two directives": (&emf.Line{}).
			Add(emf.Directive{Metrics: []emf.Metric{{Name: "A", Unit: emf.None, Value: 1}}}).
			Add(emf.Directive{Dimensions: [][]string{{}}, Metrics: []emf.Metric{{Name: "B", Unit: emf.Count, Value: 2}}}),
		"names to escape": (&emf.Line{}).Dimension("Gr\"oup<é>", "x").
			Add(emf.Directive{Dimensions: [][]string{{"Gr\"oup<é>", "a&b\\c\n"}}, Metrics: []emf.Metric{{Name: "Ré\tq", Unit: "Co<unt>", Value: 1}}}),
	} {
		var got, want bytes.Buffer
		slog.New(slog.NewJSONHandler(&got, nil)).Info("x", l.Attrs(time.UnixMilli(1_800_000_000_000))...)
		slog.New(slog.NewJSONHandler(&want, nil)).Info("x", reflective(l, time.UnixMilli(1_800_000_000_000))...)
		if stripTime(got.String()) != stripTime(want.String()) {
			t.Errorf("%s:\n got %s\nwant %s", name, got.String(), want.String())
		}
	}
}

// reflective is the line's attributes with the block as maps and slices of
// any, the form encoding/json reflects over.
func reflective(l *emf.Line, now time.Time) []any {
	attrs := l.Attrs(now)
	aws := attrs[len(attrs)-1].(slog.Attr)
	group := aws.Value.Group()
	raw, err := json.Marshal(group[1].Value.Any())
	if err != nil {
		panic(err)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		panic(err)
	}
	attrs[len(attrs)-1] = slog.Group("_aws", group[0], slog.Any("CloudWatchMetrics", generic))
	return attrs
}

func stripTime(line string) string {
	_, rest, _ := strings.Cut(line, `"level"`)
	return rest
}

// BenchmarkLine is the metric part of the access line every request writes:
// two directives, written through slog's JSON handler.
func BenchmarkLine(b *testing.B) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	now := time.UnixMilli(1_800_000_000_000)
	b.ReportAllocs()
	for b.Loop() {
		l := (&emf.Line{}).Dimension("Group", "credits").Dimension("Operation", "credits.balance.read").
			Add(emf.Directive{Dimensions: [][]string{{"Group", "Operation"}, {"Group"}}, Metrics: []emf.Metric{
				{Name: "Requests", Unit: emf.Count, Value: 1}, {Name: "Latency", Unit: emf.Milliseconds, Value: 2},
				{Name: "Errors4xx", Unit: emf.Count}, {Name: "Errors5xx", Unit: emf.Count},
			}}).
			Add(emf.Directive{Dimensions: [][]string{{"Code"}}, Metrics: []emf.Metric{{Name: "Problems", Unit: emf.Count, Value: 1}}})
		log.Info("request", l.Attrs(now)...)
	}
}
