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
	"bytes"
	"encoding/json"
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
//
// A Line is used through its pointer and never copied: its slices start in
// its own arrays, sized for the access line (three dimensions, two
// directives), so a request's line grows no slice.
type Line struct {
	dims       []slog.Attr
	directives directives
	dimArray   [3]slog.Attr
	dirArray   [2]Directive
	aws        [2]slog.Attr
}

// Dimension sets a dimension's value (a top-level key of the line).
func (l *Line) Dimension(name, value string) *Line {
	if l.dims == nil {
		l.dims = l.dimArray[:0]
	}
	l.dims = append(l.dims, slog.String(name, value))
	return l
}

// Add adds a directive; a directive with no metrics is left out.
func (l *Line) Add(d Directive) *Line {
	if len(d.Metrics) > 0 {
		if l.directives == nil {
			l.directives = l.dirArray[:0]
		}
		l.directives = append(l.directives, d)
	}
	return l
}

// Attrs are the line's dimension values, metric values (top-level keys, as
// the format requires) and its `_aws` block, stamped with now. A metric
// named in two directives is written once, with its first value.
func (l *Line) Attrs(now time.Time) []any {
	attrs := l.AppendAttrs(nil, now)
	if attrs == nil {
		return nil
	}
	out := make([]any, len(attrs))
	for i, a := range attrs {
		out[i] = a
	}
	return out
}

// AppendAttrs appends what Attrs returns to dst as slog.Attrs, for a
// caller that logs with LogAttrs: boxing each attribute into an any costs
// an allocation apiece, on the access line of every request. The `_aws`
// group is kept in the line: it holds until the line's next AppendAttrs.
func (l *Line) AppendAttrs(dst []slog.Attr, now time.Time) []slog.Attr {
	if len(l.directives) == 0 {
		return dst
	}
	dst = append(dst, l.dims...)
	for i, d := range l.directives {
		for k, m := range d.Metrics {
			if !l.namedBefore(i, k, m.Name) {
				dst = append(dst, slog.Int64(m.Name, m.Value))
			}
		}
	}
	// The group's members sit in the line, and the array is boxed as a
	// pointer: neither allocates.
	l.aws = [2]slog.Attr{slog.Int64("Timestamp", now.UnixMilli()), slog.Any("CloudWatchMetrics", &l.directives)}
	return append(dst, slog.Attr{Key: "_aws", Value: slog.GroupValue(l.aws[:]...)})
}

// namedBefore reports whether a metric before the k-th of the i-th
// directive has this name: a line holds a handful of metrics, so a scan
// costs less than a set.
func (l *Line) namedBefore(i, k int, name string) bool {
	for j, d := range l.directives[:i+1] {
		ms := d.Metrics
		if j == i {
			ms = ms[:k]
		}
		for _, m := range ms {
			if m.Name == name {
				return true
			}
		}
	}
	return false
}

// directives is the CloudWatchMetrics array, encoded by appending bytes:
// as maps and slices of any, encoding/json's reflection was a tenth of an
// authenticated read's CPU, on the access line of every request
// (docs/benchmarks.md). Keys are in the order encoding/json sorts a map's.
type directives []Directive

func (ds directives) MarshalJSON() ([]byte, error) {
	return ds.AppendJSON(make([]byte, 0, 160*len(ds))), nil
}

// AppendJSON appends what MarshalJSON returns to b: a JSON line writer
// (shared/base/jsonlog) writes the array into its own buffer.
func (ds directives) AppendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, d := range ds {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Dimensions":[`...)
		for j, set := range d.Dimensions {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for k, name := range set {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendString(b, name)
			}
			b = append(b, ']')
		}
		b = append(b, `],"Metrics":[`...)
		for j, m := range d.Metrics {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Name":`...)
			b = appendString(b, m.Name)
			b = append(b, `,"Unit":`...)
			b = appendString(b, string(m.Unit))
			b = append(b, '}')
		}
		b = append(b, `],"Namespace":`...)
		b = appendString(b, Namespace)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendString appends s as a JSON string. Names and units are plain
// ASCII, copied as they are; anything else is left to encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			// As slog writes strings: HTML characters unescaped.
			var q bytes.Buffer
			enc := json.NewEncoder(&q)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s)
			return append(b, bytes.TrimSuffix(q.Bytes(), []byte("\n"))...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
