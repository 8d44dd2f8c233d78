package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"platformapi/shared/redact"
)

type ctxKey int

const (
	keyState ctxKey = iota
	keyCallID
)

// requestState is everything the request path keeps about one request, in
// one context value set by edge: one allocation and one r.WithContext
// instead of one per field (issue 21).
type requestState struct {
	id   string
	base *slog.Logger
	// logger is base with the request id, made on first use: most requests
	// log only their access line, which names the id itself.
	loggerOnce sync.Once
	logger     *slog.Logger
	info       logInfo
	outcome    outcome
	principal  *Principal
}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(keyState).(*requestState)
	return st
}

func RequestID(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.id
	}
	return ""
}

func Logger(ctx context.Context) *slog.Logger {
	st := stateFrom(ctx)
	if st == nil {
		return slog.Default()
	}
	st.loggerOnce.Do(func() { st.logger = st.base.With(slog.String("requestId", st.id)) })
	return st.logger
}

// logInfo is filled in as the request travels so that the access log line can
// name the operation and the key without ever seeing a secret.
type logInfo struct {
	operation string
	keyID     string
	endUser   string
	// literalPath: the request matched a route without path parameters,
	// so its path is the route table's own text and holds no secret to
	// redact (redaction's regular expressions were 7% of a read's CPU).
	literalPath bool
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// statusRecorder remembers the status for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// edge is the outermost middleware: a request id on every response, one
// JSON access-log line per request (operation, status, latency; never a
// header value, a body or a secret), and panics turned into a plain 500.
func (k *Kernel) edge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &requestState{id: newRequestID(), base: k.log}
		w.Header().Set("X-Request-Id", st.id)
		info := &st.info
		r = r.WithContext(context.WithValue(r.Context(), keyState, st))
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				Logger(r.Context()).Error("panic", slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					WriteProblem(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			path := r.URL.Path
			if !info.literalPath {
				path = redact.Secrets(path)
			}
			// Attributes in an array, not boxed one by one into []any.
			var buf [9]slog.Attr
			attrs := append(buf[:0],
				slog.String("requestId", st.id),
				slog.String("method", r.Method), slog.String("path", path),
				slog.Int("status", rec.status), slog.Int64("latencyMicros", time.Since(start).Microseconds()),
				slog.Int("bytes", rec.bytes),
			)
			if info.operation != "" {
				attrs = append(attrs, slog.String("operation", info.operation))
			}
			if info.keyID != "" {
				attrs = append(attrs, slog.String("keyId", info.keyID))
			}
			if info.endUser != "" {
				attrs = append(attrs, slog.String("endUser", redact.Secrets(info.endUser)))
			}
			k.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

func infoFrom(ctx context.Context) *logInfo {
	if st := stateFrom(ctx); st != nil {
		return &st.info
	}
	return &logInfo{}
}
