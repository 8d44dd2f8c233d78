// Package jsonlog is a slog.Handler that writes the very bytes
// slog.NewJSONHandler writes, encoding a line straight into a pooled buffer:
// slog's JSONHandler was 6% of an audited read's CPU (docs/benchmarks.md),
// spent on its handle state, its attribute walk and its encoder for
// json.Marshaler values, on the access line every request writes.
// BenchmarkAccessLine (jsonlog_test.go) writes the kernel's access line both
// ways: 0 allocations per line against slog's 2 (736 B), and 1.2–2.1 µs
// against 5.0–5.6 µs on a quiet development machine (2026-11-26; about a
// third of slog's time on a loaded one, 2026-11-29). The tests hold the
// bytes equal to slog's for every line the kernel writes.
//
// It handles the attributes an access line holds (strings, integers,
// booleans, durations, groups, and values that append their own JSON, as
// the emf block does); a record holding anything else, and any handler
// opened on a group, goes through an slog.JSONHandler on the same writer
// and lock, so every line is still one whole write.
package jsonlog

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Appender is a value that appends its JSON encoding to a line itself: the
// bytes encoding/json would write for it (compact, HTML characters
// unescaped, as slog's JSONHandler writes a json.Marshaler).
type Appender interface {
	json.Marshaler
	AppendJSON(b []byte) []byte
}

// Handler writes JSON lines, as slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}).
type Handler struct {
	out   *lockedWriter
	level slog.Leveler
	// pre is the attributes given to WithAttrs, encoded, each with its
	// leading comma.
	pre []byte
	// slow is slog's own handler on the same writer and lock, with the
	// same attributes, for what this one does not encode.
	slow slog.Handler
}

// New is a handler writing to w the lines of level and above.
func New(w io.Writer, level slog.Leveler) *Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	out := &lockedWriter{w: w}
	return &Handler{out: out, level: level, slow: slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level})}
}

// lockedWriter serializes the lines of both encoders onto the writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Enabled reports whether level is at or above the handler's.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle writes the record's line, as Write does with its attributes.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	// A line's attributes fit the array: no allocation.
	var buf [32]slog.Attr
	attrs := buf[:0]
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	return h.Write(ctx, r.Time, r.Level, r.Message, attrs...)
}

// Write writes one line of the given time, level, message and attributes
// without a record: the attributes of an access line outnumber what a
// record holds inline. What it does not encode goes to slog's handler.
func (h *Handler) Write(ctx context.Context, at time.Time, level slog.Level, msg string, attrs ...slog.Attr) error {
	bp := buffers.Get().(*[]byte)
	defer release(bp)
	b, ok := h.begin((*bp)[:0], at, level, msg)
	for _, a := range attrs {
		if b, ok = appendAttr(b, a, true); !ok {
			break
		}
	}
	if !ok {
		r := slog.NewRecord(at, level, msg, 0)
		r.AddAttrs(attrs...)
		return h.slow.Handle(ctx, r)
	}
	*bp = append(b, '}', '\n')
	_, err := h.out.Write(*bp)
	return err
}

// WithAttrs is a handler that writes attrs on every line. Attributes this
// package does not encode make it slog's handler from then on.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	pre := append([]byte(nil), h.pre...)
	for _, a := range attrs {
		var ok bool
		if pre, ok = appendAttr(pre, a, true); !ok {
			return h.slow.WithAttrs(attrs)
		}
	}
	return &Handler{out: h.out, level: h.level, pre: pre, slow: h.slow.WithAttrs(attrs)}
}

// WithGroup is slog's handler opened on the group.
func (h *Handler) WithGroup(name string) slog.Handler { return h.slow.WithGroup(name) }

// begin appends the built-in keys and the handler's attributes; false when
// the time is one slog writes with an error instead.
func (h *Handler) begin(b []byte, at time.Time, level slog.Level, msg string) ([]byte, bool) {
	b = append(b, '{')
	if !at.IsZero() {
		if y := at.Year(); y < 0 || y >= 10000 {
			return b, false
		}
		b = append(b, `"time":"`...)
		b = at.Round(0).AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"level":`...)
	b = appendString(b, level.String())
	b = append(b, `,"msg":`...)
	b = appendString(b, msg)
	return append(b, h.pre...), true
}

// appendAttr appends "key":value, after a comma when sep; false for what slog's JSONHandler
// writes differently from a plain key and value (an empty key or group, a
// float, a time, an error, any other value).
func appendAttr(b []byte, a slog.Attr, sep bool) ([]byte, bool) {
	if a.Key == "" {
		return b, false
	}
	v := a.Value.Resolve()
	if sep {
		b = append(b, ',')
	}
	b = appendString(b, a.Key)
	b = append(b, ':')
	switch v.Kind() {
	case slog.KindString:
		b = appendString(b, v.String())
	case slog.KindInt64:
		b = strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		b = strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		b = strconv.AppendInt(b, int64(v.Duration()), 10)
	case slog.KindGroup:
		g := v.Group()
		if len(g) == 0 {
			return b, false
		}
		b = append(b, '{')
		for i, m := range g {
			var ok bool
			if b, ok = appendAttr(b, m, i > 0); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	case slog.KindAny:
		j, ok := v.Any().(Appender)
		if !ok {
			return b, false
		}
		b = j.AppendJSON(b)
	default:
		return b, false
	}
	return b, true
}

// appendString appends s quoted as slog's JSONHandler quotes it: as
// encoding/json does with HTML escaping off, but control characters other
// than \n, \r and \t as \u00XX.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			// Valid JSON, but not JavaScript: escaped, as slog does.
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hex = "0123456789abcdef"

var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// release returns a line's buffer, unless a rare huge line grew it.
func release(bp *[]byte) {
	if cap(*bp) <= 16<<10 {
		buffers.Put(bp)
	}
}
