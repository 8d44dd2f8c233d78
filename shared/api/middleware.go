package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"platformapi/shared/redact"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyLogger
	keyPrincipal
	keyLogInfo
	keyCallID
)

func RequestID(ctx context.Context) string { s, _ := ctx.Value(keyRequestID).(string); return s }

func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(keyLogger).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// logInfo is filled in as the request travels so that the access log line can
// name the operation and the key without ever seeing a secret.
type logInfo struct {
	operation string
	keyID     string
	endUser   string
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
		id := newRequestID()
		w.Header().Set("X-Request-Id", id)
		info := &logInfo{}
		logger := k.log.With(slog.String("requestId", id))
		ctx := context.WithValue(r.Context(), keyRequestID, id)
		ctx = context.WithValue(ctx, keyLogger, logger)
		ctx = context.WithValue(ctx, keyLogInfo, info)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				logger.Error("panic", slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					WriteProblem(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			attrs := []any{
				slog.String("method", r.Method), slog.String("path", redact.Secrets(r.URL.Path)),
				slog.Int("status", rec.status), slog.Int64("latencyMicros", time.Since(start).Microseconds()),
				slog.Int("bytes", rec.bytes),
			}
			if info.operation != "" {
				attrs = append(attrs, slog.String("operation", info.operation))
			}
			if info.keyID != "" {
				attrs = append(attrs, slog.String("keyId", info.keyID))
			}
			if info.endUser != "" {
				attrs = append(attrs, slog.String("endUser", redact.Secrets(info.endUser)))
			}
			logger.Info("request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

func infoFrom(ctx context.Context) *logInfo {
	if i, ok := ctx.Value(keyLogInfo).(*logInfo); ok {
		return i
	}
	return &logInfo{}
}
