package lambdarie

import (
	"regexp"
	"testing"
	"time"
)

// A report's figure is read from the first line of its kind, with or
// without the cold start's Init Duration before it, and is absent until
// that line is written.
func TestAReportsDurationIsItsFirstLinesMilliseconds(t *testing.T) {
	const cold = "START RequestId: a\nREPORT RequestId: a\tInit Duration: 9.50 ms\tDuration: 312.25 ms\tBilled Duration: 313 ms\n" +
		"REPORT RequestId: b\tDuration: 1.00 ms\n"
	for _, tc := range []struct {
		name   string
		report *regexp.Regexp
		log    string
		want   time.Duration
		ok     bool
	}{
		{"init", initReport, "x (rapid) INIT REPORT(durationMs: 41.5) y", 41500 * time.Microsecond, true},
		{"init not yet", initReport, "START RequestId: a\n", 0, false},
		{"first invoke after a cold start", invokeReport, cold, 312250 * time.Microsecond, true},
		{"first invoke of a warm start", invokeReport, "REPORT RequestId: b\tDuration: 2.5 ms\n", 2500 * time.Microsecond, true},
		{"invoke not yet", invokeReport, "START RequestId: a\n", 0, false},
		{"a figure that is no number", invokeReport, "REPORT RequestId: b\tDuration: 1.2.3 ms\n", 0, false},
	} {
		got, ok := reportedDuration(tc.report, tc.log)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %s, %v; want %s, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
