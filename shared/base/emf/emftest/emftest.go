// Package emftest checks log lines against the rules CloudWatch applies
// before it extracts metrics from them: a line that breaks one is kept as a
// log line but yields no metric, silently, so tests check every line.
package emftest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// units CloudWatch accepts in a metric definition.
var units = map[string]bool{
	"Seconds": true, "Microseconds": true, "Milliseconds": true, "Bytes": true, "Kilobytes": true,
	"Megabytes": true, "Gigabytes": true, "Terabytes": true, "Bits": true, "Kilobits": true,
	"Megabits": true, "Gigabits": true, "Terabits": true, "Percent": true, "Count": true,
	"Bytes/Second": true, "Kilobytes/Second": true, "Megabytes/Second": true, "Gigabytes/Second": true,
	"Terabytes/Second": true, "Bits/Second": true, "Kilobits/Second": true, "Megabits/Second": true,
	"Gigabits/Second": true, "Terabits/Second": true, "Count/Second": true, "None": true,
}

// Check validates one line: the `_aws` block's shape, every metric named
// is a top-level number, every dimension named is a top-level string. It
// returns the line and its metric names by directive.
func Check(line string) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	aws, ok := m["_aws"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no _aws object")
	}
	ts, ok := aws["Timestamp"].(float64)
	if !ok || ts != math.Trunc(ts) || ts < 1e12 {
		return nil, fmt.Errorf("_aws.Timestamp %v is not epoch milliseconds", aws["Timestamp"])
	}
	cws, ok := aws["CloudWatchMetrics"].([]any)
	if !ok || len(cws) == 0 {
		return nil, fmt.Errorf("_aws.CloudWatchMetrics is not a non-empty array")
	}
	for i, c := range cws {
		d, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("directive %d is not an object", i)
		}
		if ns, _ := d["Namespace"].(string); ns == "" || len(ns) > 255 {
			return nil, fmt.Errorf("directive %d: namespace %v", i, d["Namespace"])
		}
		sets, ok := d["Dimensions"].([]any)
		if !ok {
			return nil, fmt.Errorf("directive %d: Dimensions is not an array", i)
		}
		for _, s := range sets {
			keys, ok := s.([]any)
			if !ok || len(keys) > 30 {
				return nil, fmt.Errorf("directive %d: dimension set %v", i, s)
			}
			for _, k := range keys {
				name, _ := k.(string)
				if v, ok := m[name].(string); !ok || v == "" || len(v) > 1024 {
					return nil, fmt.Errorf("directive %d: dimension %q has no string value on the line", i, name)
				}
			}
		}
		defs, ok := d["Metrics"].([]any)
		if !ok || len(defs) == 0 || len(defs) > 100 {
			return nil, fmt.Errorf("directive %d: Metrics %v", i, d["Metrics"])
		}
		for _, def := range defs {
			md, _ := def.(map[string]any)
			name, _ := md["Name"].(string)
			if name == "" || len(name) > 255 {
				return nil, fmt.Errorf("directive %d: metric name %v", i, md["Name"])
			}
			if u, _ := md["Unit"].(string); !units[u] {
				return nil, fmt.Errorf("metric %s: unit %v", name, md["Unit"])
			}
			if _, ok := m[name].(float64); !ok {
				return nil, fmt.Errorf("metric %s has no numeric value on the line", name)
			}
		}
	}
	return m, nil
}

// Lines returns the lines of logs that carry metrics, each checked; a line
// that breaks a rule fails t.
func Lines(t testing.TB, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, `"_aws"`) {
			continue
		}
		m, err := Check(l)
		if err != nil {
			t.Fatalf("log line is not valid EMF: %v\n%s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// Metrics is the set of metric names line's directives declare.
func Metrics(line map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, c := range line["_aws"].(map[string]any)["CloudWatchMetrics"].([]any) {
		for _, def := range c.(map[string]any)["Metrics"].([]any) {
			out[def.(map[string]any)["Name"].(string)] = true
		}
	}
	return out
}
