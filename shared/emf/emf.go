// Package emf writes CloudWatch metrics as part of a structured log line, in
// the Embedded Metric Format: CloudWatch Logs extracts the metrics from the
// `_aws` block of any JSON line a Lambda function writes, so a metric costs no
// API call, no client, no credentials and no extra latency, and the values
// sit on the same line as the request id that explains them.
//
// It is written here, on log/slog, rather than taken from a library:
// Powertools for AWS Lambda has no Go metrics module, and the Go EMF
// libraries on the module proxy (prozz/aws-embedded-metrics-golang and its
// forks) write a line of their own to stdout, while the point here is that the
// metrics ride on the one request log line slog already writes. The format
// is one nested object; this is less code than adapting a library to it.
//
// Spec: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
package emf

import (
	"log/slog"
	"time"
)

// Namespace is the CloudWatch namespace of every metric this API writes;
// the dashboard and alarms in infra read the same constant.
const Namespace = "PlatformAPI"

// Unit is a CloudWatch metric unit.
type Unit string

// The units the API uses.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	None         Unit = "None"
)

// Metric is one value of a line. Values are integers: counts, whole
// milliseconds, micro-credits; never a float for money.
type Metric struct {
	Name  string
	Unit  Unit
	Value int64
}

// Directive is one entry of CloudWatchMetrics: which of the line's metrics
// CloudWatch aggregates by which sets of its dimensions. Every dimension set
// multiplies the metrics stored (and billed), so sets name only
// low-cardinality keys: an operation id, a worker, an error code of the
// catalogue; never an account, key or request id.
type Directive struct {
	Dimensions [][]string
	Metrics    []Metric
}

// Line is the metric part of one log line: the dimension values, the
// directives, and Attrs to append to the slog call that writes the line.
type Line struct {
	dims       []slog.Attr
	directives []Directive
}

// Dimension sets a dimension's value (a top-level key of the line).
func (l *Line) Dimension(name, value string) *Line {
	l.dims = append(l.dims, slog.String(name, value))
	return l
}

// Add adds a directive; a directive with no metrics is left out.
func (l *Line) Add(d Directive) *Line {
	if len(d.Metrics) > 0 {
		l.directives = append(l.directives, d)
	}
	return l
}

// Attrs are the line's dimension values, metric values (top-level keys, as
// the format requires) and its `_aws` block, stamped with now. A metric
// named in two directives is written once, with its first value.
func (l *Line) Attrs(now time.Time) []any {
	if len(l.directives) == 0 {
		return nil
	}
	out := make([]any, 0, len(l.dims)+8)
	for _, d := range l.dims {
		out = append(out, d)
	}
	seen := map[string]bool{}
	cw := make([]any, 0, len(l.directives))
	for _, d := range l.directives {
		defs := make([]any, 0, len(d.Metrics))
		for _, m := range d.Metrics {
			defs = append(defs, map[string]any{"Name": m.Name, "Unit": string(m.Unit)})
			if !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, slog.Int64(m.Name, m.Value))
			}
		}
		dims := d.Dimensions
		if dims == nil {
			dims = [][]string{}
		}
		cw = append(cw, map[string]any{"Namespace": Namespace, "Dimensions": dims, "Metrics": defs})
	}
	return append(out, slog.Group("_aws", slog.Int64("Timestamp", now.UnixMilli()), slog.Any("CloudWatchMetrics", cw)))
}
