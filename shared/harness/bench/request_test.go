package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"platformapi/shared/app"
	"platformapi/shared/base/jsonlog"
)

// BenchmarkRequest is the enforce path's micro-benchmark: the
// authenticated, limited read and an idempotent write through the whole
// handler of the local server on embedded storage, in process, with the
// access log formatted and discarded as the load run does it. Its allocs/op
// is the allocations per request docs/benchmarks.md quotes; `go test -cpuprofile`
// on it shows where a request's CPU goes.
func BenchmarkRequest(b *testing.B) {
	for _, audited := range []bool{true, false} {
		name := "Audited"
		if !audited {
			name = "Unaudited"
		}
		b.Run(name, func(b *testing.B) {
			h, secret := benchServer(b, audited)
			auth := "Bearer " + secret
			b.Run("Read", func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, balancePath, nil)
				req.Header.Set("Authorization", auth)
				serveEach(b, h, req)
			})
			b.Run("IdempotentWrite", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				cpu0 := processCPU()
				for b.Loop() {
					i++
					req := httptest.NewRequest(http.MethodPost, projectsPath, strings.NewReader(fmt.Sprintf(`{"name":"bench %s %d"}`, name, i)))
					req.Header.Set("Authorization", auth)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%s-%08d", name, i))
					serveOK(b, h, req, http.StatusCreated)
				}
				reportCPU(b, cpu0)
			})
		})
	}
}

// BenchmarkBare is GET /health through the same handler: the edge's own
// cost (request state, routing, the access line) with a handler that does
// almost nothing, what the server-alone run compares with a plain net/http
// server.
func BenchmarkBare(b *testing.B) {
	h, _ := benchServer(b, true)
	serveEach(b, h, httptest.NewRequest(http.MethodGet, "/health", nil))
}

// serveEach serves req once per iteration, each answered 200, and reports
// allocations and the process's CPU per request.
func serveEach(b *testing.B, h http.Handler, req *http.Request) {
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		serveOK(b, h, req, http.StatusOK)
	}
	reportCPU(b, cpu0)
}

// reportCPU reports the process's CPU per request since cpu0: every
// goroutine's, the audit flusher's and the collector's included, which the
// wall time of one request at a time leaves out when they run beside it.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// benchServer is the local server, configured as functions/local
// configures it (aloneConfig), on fresh embedded storage, and the secret of
// the depth-3 key the load run uses.
func benchServer(b *testing.B, audited bool) (http.Handler, string) {
	b.Helper()
	cfg, err := aloneConfig(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rt, err := app.Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	if !audited {
		rt.Audit = nil
	}
	h, err := rt.NewServer(slog.New(jsonlog.New(io.Discard, nil)), nil)
	if err != nil {
		b.Fatal(err)
	}
	secret, err := leafKey(apiClient{h: h}, rt.Signer)
	if err != nil {
		b.Fatal(err)
	}
	return h, secret
}

// discardWriter is a ResponseWriter that keeps only the status, so the
// benchmark measures the server and not a recorder's buffer.
type discardWriter struct {
	header http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) WriteHeader(code int)        { d.status = code }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

func serveOK(b *testing.B, h http.Handler, req *http.Request, want int) {
	w := &discardWriter{header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status != want {
		b.Fatalf("%s %s: status %d, want %d", req.Method, req.URL, w.status, want)
	}
}
