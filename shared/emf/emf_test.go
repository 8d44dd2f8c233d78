package emf_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"platformapi/shared/emf"
	"platformapi/shared/emf/emftest"
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
