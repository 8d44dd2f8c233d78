package upstream

import (
	"net/http"
	"testing"
	"time"
)

func TestCreditsParseExactlyIntoMicroCredits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"0.02", 20_000, true},
		{"0.015", 15_000, true},
		{"1", 1_000_000, true},
		{"1.000001", 1_000_001, true},
		{"0.1", 100_000, true},  // a float64 would make 0.1 * 1e6 inexact
		{"0.29", 290_000, true}, // int64(0.29 * 1e6) is 289999 in floating point
		{"123456789012.999999", 123_456_789_012_999_999, true},
		{"1234567890123", 0, false}, // too many integer digits: could overflow
		{"0.0000001", 0, false},     // below one micro-credit
		{"", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1e3", 0, false},
		{".5", 0, false},
		{"5.", 0, false},
		{" 1", 0, false},
		{"1,5", 0, false},
		{"0x10", 0, false},
	} {
		got, err := parseCredits(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseCredits(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestCreditsFormatIsTheShortestExactDecimal(t *testing.T) {
	for micro, want := range map[int64]string{
		0: "0", 1: "0.000001", 5_000: "0.005", 20_000: "0.02", 1_000_000: "1",
		1_500_000: "1.5", 123_456_789: "123.456789",
	} {
		if got := formatCredits(micro); got != want {
			t.Errorf("formatCredits(%d) = %q, want %q", micro, got, want)
		}
		if back, err := parseCredits(want); err != nil || back != micro {
			t.Errorf("round trip of %d: %d, %v", micro, back, err)
		}
	}
}

func TestRetryAfterIsReadClampedAndRoundedUp(t *testing.T) {
	date := func(d time.Duration) string { return testNow.Add(d).Format(http.TimeFormat) }
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", time.Second},
		{"12", 12 * time.Second},
		{" 12 ", 12 * time.Second},
		{"0", time.Second},
		{"600", 10 * time.Minute},
		{"601", MaxRetryAfter},
		{"9223372036854775808", MaxRetryAfter},
		{"-5", time.Second},
		{"1.5", time.Second},
		{"later", time.Second},
		{date(45 * time.Second), 45 * time.Second},
		{date(-time.Hour), time.Second},
		{date(48 * time.Hour), MaxRetryAfter},
		{testNow.Add(90 * time.Second).Format(time.RFC850), 90 * time.Second},
	} {
		if got := retryAfter(tc.in, testNow); got != tc.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// An HTTP-date has whole seconds; a clock between them rounds up.
	if got := retryAfter(date(10*time.Second), testNow.Add(-300*time.Millisecond)); got != 11*time.Second {
		t.Errorf("fractional wait = %s, want 11s", got)
	}
}
