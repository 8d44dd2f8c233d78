package jsonlog_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"platformapi/shared/base/emf"
	"platformapi/shared/base/jsonlog"
)

// odd holds every kind of character slog's JSONHandler escapes or passes
// through: quotes, backslashes, control characters, HTML characters, DEL,
// invalid UTF-8, the JavaScript line separators and a character outside
// the BMP.
const odd = "a\"b\\c\nd\re\tf\x00g\x01h\x1fi<j>k&l\x7fm\xffn\u2028o\u2029p\U0001F600q é"

func metrics() []slog.Attr {
	l := (&emf.Line{}).Dimension("Group", "credits").Dimension("Operation", "getCreditBalance").
		Add(emf.Directive{Dimensions: [][]string{{"Group", "Operation"}, {"Group"}}, Metrics: []emf.Metric{
			{Name: "Requests", Unit: emf.Count, Value: 1}, {Name: "Latency", Unit: emf.Milliseconds, Value: 3}}}).
		Dimension("Code", "limit_exceeded").
		Add(emf.Directive{Dimensions: [][]string{{"Code"}}, Metrics: []emf.Metric{{Name: "Problems", Unit: emf.Count, Value: 1}}})
	return l.AppendAttrs(nil, time.UnixMilli(1_780_000_000_123))
}

type lazy struct{}

func (lazy) LogValue() slog.Value { return slog.StringValue("resolved") }

// TestLinesAreTheBytesSlogsJSONHandlerWrites: for each record, the line
// equals slog.JSONHandler's byte for byte, whether this package encodes it
// or hands it to slog's (a float, a time, an error, an empty key or
// group), through Handle, Write and handlers made by WithAttrs and
// WithGroup.
func TestLinesAreTheBytesSlogsJSONHandlerWrites(t *testing.T) {
	at := time.Date(2026, 11, 26, 20, 31, 5, 120_000_000, time.UTC)
	cases := []struct {
		name  string
		at    time.Time
		level slog.Level
		msg   string
		with  []slog.Attr
		group string
		attrs []slog.Attr
	}{
		{name: "plain access line", at: at, msg: "request", attrs: append([]slog.Attr{
			slog.String("requestId", "req_0123456789abcdef01234567"), slog.String("method", "GET"),
			slog.String("path", "/v1/credits/balance"), slog.Int("status", 200), slog.Int64("latencyMicros", 412),
			slog.Int("bytes", 57), slog.String("operation", "getCreditBalance"), slog.String("keyId", "key_x"),
		}, metrics()...)},
		{name: "odd characters everywhere", at: at, msg: odd, with: []slog.Attr{slog.String(odd, odd)},
			attrs: []slog.Attr{slog.String(odd, odd), slog.Group(odd, slog.String(odd, odd))}},
		{name: "audited, as a Lambda writes it", at: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)), msg: "request",
			with: []slog.Attr{slog.String("function", "credits")},
			attrs: []slog.Attr{slog.String("requestId", "req_1"), slog.Int("au", 1),
				slog.Group("audit", slog.String("a", "acc_1"), slog.Bool("r", true), slog.Int64("mc", -5)),
				slog.String("awsRequestId", "aws-1"), slog.String("traceId", "1-2-3")}},
		{name: "error line", at: at, level: slog.LevelError, msg: "panic",
			attrs: []slog.Attr{slog.String("panic", "boom"), slog.String("stack", "goroutine 1 [running]:\n\tmain.go:1\n")}},
		{name: "other kinds", at: at, level: slog.LevelWarn + 2, msg: "m",
			attrs: []slog.Attr{slog.Uint64("u", 1<<63), slog.Duration("d", 1500*time.Millisecond), slog.Any("lazy", lazy{}), slog.Bool("f", false)}},
		{name: "no time", msg: "m", attrs: []slog.Attr{slog.String("k", "v")}},
		{name: "a float goes through slog", at: at, msg: "m", attrs: []slog.Attr{slog.String("k", "v"), slog.Float64("f", 0.1)}},
		{name: "a time goes through slog", at: at, msg: "m", attrs: []slog.Attr{slog.Time("t", at)}},
		{name: "an error goes through slog", at: at, msg: "m", attrs: []slog.Attr{slog.Any("err", errors.New("e"))}},
		{name: "a struct goes through slog", at: at, msg: "m", attrs: []slog.Attr{slog.Any("s", struct{ A int }{1})}},
		{name: "an empty key goes through slog", at: at, msg: "m", attrs: []slog.Attr{{}, slog.Group("", slog.String("in", "line"))}},
		{name: "an empty group goes through slog", at: at, msg: "m", attrs: []slog.Attr{slog.Group("g")}},
		{name: "a float given to WithAttrs", at: at, msg: "m", with: []slog.Attr{slog.Float64("f", 2.5)}, attrs: []slog.Attr{slog.String("k", "v")}},
		{name: "a group opened by WithGroup", at: at, msg: "m", with: []slog.Attr{slog.String("w", "x")}, group: "g", attrs: []slog.Attr{slog.String("k", "v")}},
		{name: "a year slog refuses", at: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), msg: "m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want, got, written bytes.Buffer
			handlers := []slog.Handler{slog.NewJSONHandler(&want, nil), jsonlog.New(&got, nil)}
			for i, h := range handlers {
				if c.with != nil {
					h = h.WithAttrs(c.with)
				}
				if c.group != "" {
					h = h.WithGroup(c.group)
				}
				handlers[i] = h
				r := slog.NewRecord(c.at, c.level, c.msg, 0)
				r.AddAttrs(c.attrs...)
				if err := h.Handle(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
			if got.String() != want.String() {
				t.Errorf("Handle wrote\n%s\nslog writes\n%s", got.String(), want.String())
			}
			h := jsonlog.New(&written, nil)
			if c.with != nil || c.group != "" {
				return // Write is the kernel's, on a handler it was given as it is
			}
			if err := h.Write(context.Background(), c.at, c.level, c.msg, c.attrs...); err != nil {
				t.Fatal(err)
			}
			if written.String() != want.String() {
				t.Errorf("Write wrote\n%s\nslog writes\n%s", written.String(), want.String())
			}
		})
	}
}

// TestTheHandlerKeepsItsLevel: Enabled answers as slog's handler at the
// same level.
func TestTheHandlerKeepsItsLevel(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		h, ref := jsonlog.New(io.Discard, level), slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: level})
		for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
			if got, want := h.Enabled(context.Background(), l), ref.Enabled(context.Background(), l); got != want {
				t.Errorf("level %v: Enabled(%v) = %v, slog says %v", level, l, got, want)
			}
		}
	}
}

// BenchmarkAccessLine compares writing an access line with this handler
// and with slog's: the figures the package comment quotes.
func BenchmarkAccessLine(b *testing.B) {
	attrs := append([]slog.Attr{
		slog.String("requestId", "req_0123456789abcdef01234567"), slog.String("method", "GET"),
		slog.String("path", "/v1/credits/balance"), slog.Int("status", 200), slog.Int64("latencyMicros", 412),
		slog.Int("bytes", 57), slog.String("operation", "getCreditBalance"), slog.String("keyId", "key_x"),
	}, metrics()...)
	at := time.Now()
	b.Run("jsonlog", func(b *testing.B) {
		h := jsonlog.New(io.Discard, nil)
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Write(context.Background(), at, slog.LevelInfo, "request", attrs...)
		}
	})
	b.Run("slog", func(b *testing.B) {
		h := slog.NewJSONHandler(io.Discard, nil)
		b.ReportAllocs()
		for b.Loop() {
			r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
			r.AddAttrs(attrs...)
			_ = h.Handle(context.Background(), r)
		}
	})
}
