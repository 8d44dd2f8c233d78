// Package textlog is the log format for a person at a terminal: one short
// line per record, the access line's method, path, status and latency
// first, then the other attributes as key=value. Machines read the JSON
// lines of package jsonlog; Choose decides which a process writes.
package textlog

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"platformapi/shared/base/jsonlog"
)

// Choose is the handler a process logs to w with: JSON on Lambda
// (AWS_LAMBDA_FUNCTION_NAME is set: CloudWatch parses the lines, whatever
// LOG_FORMAT says), else LOG_FORMAT's (text or json), else text when w is
// a terminal and JSON otherwise (a file, a pipe, a collector).
func Choose(w io.Writer, level slog.Leveler, getenv func(string) string) slog.Handler {
	if getenv("AWS_LAMBDA_FUNCTION_NAME") == "" {
		switch strings.ToLower(getenv("LOG_FORMAT")) {
		case "text":
			return New(w, level)
		case "":
			if terminal(w) {
				return New(w, level)
			}
		}
	}
	return jsonlog.New(w, level)
}

// terminal reports whether w is a character device (a terminal).
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// Handler writes one text line per record.
type Handler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Leveler
	// pre is the attributes of WithAttrs, written; group the open group's
	// prefix ("g." per WithGroup).
	pre, group string
}

// New is a handler writing to w the lines of level and above.
func New(w io.Writer, level slog.Leveler) *Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &Handler{mu: &sync.Mutex{}, w: w, level: level}
}

// Enabled reports whether level is at or above the handler's.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// emfBlock is the key of the Embedded Metric Format's block (shared/base/emf),
// which only CloudWatch reads, and only from JSON: a text line leaves it
// out and keeps the metric values, which read as key=value.
const emfBlock = "_aws"

// headline are the access line's attributes written first, bare, in this
// order: "GET /v1/credits/balance 200 1.2ms".
var headline = []string{"method", "path", "status", "latencyMicros"}

// Handle writes "15:04:05.000 INFO  msg [headline] key=value ...".
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	b := make([]byte, 0, 256)
	if !r.Time.IsZero() {
		b = r.Time.Local().AppendFormat(b, "15:04:05.000 ")
	}
	level := r.Level.String()
	b = append(b, level...)
	b = append(b, strings.Repeat(" ", max(1, 6-len(level)))...)
	b = append(b, r.Message...)
	var head [4]slog.Value
	var found [4]bool
	var rest []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		for i, k := range headline {
			if h.group == "" && a.Key == k && !found[i] {
				head[i], found[i] = a.Value.Resolve(), true
				return true
			}
		}
		rest = append(rest, a)
		return true
	})
	for i, v := range head {
		if !found[i] {
			continue
		}
		b = append(b, ' ')
		if headline[i] == "latencyMicros" && v.Kind() == slog.KindInt64 {
			b = append(b, (time.Duration(v.Int64()) * time.Microsecond).String()...)
			continue
		}
		b = appendValue(b, v)
	}
	b = append(b, h.pre...)
	for _, a := range rest {
		if h.group == "" && a.Key == emfBlock {
			continue
		}
		b = appendAttr(b, h.group, a)
	}
	b = append(b, '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b)
	return err
}

// WithAttrs is a handler that writes attrs on every line.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	pre := []byte(h.pre)
	for _, a := range attrs {
		pre = appendAttr(pre, h.group, a)
	}
	c := *h
	c.pre = string(pre)
	return &c
}

// WithGroup is a handler whose later attributes are keyed name.key.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group += name + "."
	return &c
}

// appendAttr appends " prefix+key=value"; a group's members are keyed
// group.member, an empty attribute is left out.
func appendAttr(b []byte, prefix string, a slog.Attr) []byte {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, m := range v.Group() {
			b = appendAttr(b, p, m)
		}
		return b
	}
	if a.Equal(slog.Attr{}) {
		return b
	}
	b = append(b, ' ')
	b = append(b, prefix...)
	b = append(b, a.Key...)
	b = append(b, '=')
	return appendValue(b, v)
}

// appendValue writes a value bare when it is one word, quoted otherwise; a
// value that writes its own JSON (jsonlog.Appender) as that JSON.
func appendValue(b []byte, v slog.Value) []byte {
	var s string
	switch v.Kind() {
	case slog.KindString:
		s = v.String()
	case slog.KindTime:
		return v.Time().AppendFormat(b, time.RFC3339Nano)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case jsonlog.Appender:
			return x.AppendJSON(b)
		case json.RawMessage:
			return append(b, x...)
		case error:
			s = x.Error()
		default:
			s = v.String()
		}
	default:
		return append(b, v.String()...)
	}
	if s != "" && bare(s) {
		return append(b, s...)
	}
	return strconv.AppendQuote(b, s)
}

// bare reports whether s reads as one word: printable, no space, no quote,
// no '='.
func bare(s string) bool {
	for _, r := range s {
		if r == ' ' || r == '"' || r == '=' || r == '\\' || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
