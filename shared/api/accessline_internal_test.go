package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/jsonlog"
	"platformapi/shared/domain/audit"
)

// records keeps the records a kernel logs; it is no *jsonlog.Handler, so
// the kernel hands it its access line as a record, as to any handler.
type records struct {
	mu  sync.Mutex
	all []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rec.Clone())
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// The access line the kernel writes through jsonlog.Handler.Write is the
// bytes slog's JSONHandler writes for the same record, for a plain
// request, an audited one whose event rides on the line, an error, a
// panic, and one whose path, end user and trace hold odd characters.
func TestTheAccessLineIsTheBytesSlogsJSONHandlerWrites(t *testing.T) {
	const odd = "\"\\\n\x01<&>\x7f\xff\u2028é😀"
	shipper := audit.NewShippingRecorder(io.Discard, nil)
	cases := map[string]struct {
		path string
		h    http.HandlerFunc
	}{
		"plain": {path: "/v1/credits/balance", h: func(w http.ResponseWriter, r *http.Request) {
			info := infoFrom(r.Context())
			info.group, info.operation, info.keyID, info.literalPath = "credits", "getCreditBalance", "key_abc", true
			_, _ = w.Write([]byte(`{"balance":"1"}`))
		}},
		"audited": {path: "/v1/credits/balance", h: func(w http.ResponseWriter, r *http.Request) {
			info := infoFrom(r.Context())
			info.group, info.operation, info.keyID, info.endUser = "credits", "getCreditBalance", "key_abc", "user "+odd
			e, err := shipper.Prepare(audit.Event{AccountID: "acc_1", KeyPath: []string{"key_root", "key_abc"},
				Operation: "getCreditBalance", Status: 200, RequestID: RequestID(r.Context()), Path: "/other" + odd})
			if err != nil {
				t.Error(err)
			}
			stateFrom(r.Context()).shipped = &e
			w.WriteHeader(http.StatusOK)
		}},
		"error": {path: "/v1/credits/balance", h: func(w http.ResponseWriter, r *http.Request) {
			WriteProblem(w, r, apierr.New(apierr.LimitExceeded, "Too many requests."))
		}},
		"panic": {path: "/v1/anything", h: func(http.ResponseWriter, *http.Request) { panic("boom " + odd) }},
		"odd characters": {path: "/v1/files/" + odd, h: func(w http.ResponseWriter, r *http.Request) {
			infoFrom(r.Context()).endUser = odd
			w.WriteHeader(http.StatusNoContent)
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := &records{}
			k := &Kernel{log: slog.New(got)}
			req := httptest.NewRequest("GET", "/", nil)
			req.URL.Path = c.path
			ctx := lambdacontext.NewContext(req.Context(), &lambdacontext.LambdaContext{AwsRequestID: "aws " + odd})
			//lint:ignore SA1029 the Lambda runtime (aws-lambda-go) puts the trace header under this string key
			ctx = context.WithValue(ctx, "x-amzn-trace-id", "Root=1-"+odd+";Sampled=1")
			k.edge(c.h).ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
			if len(got.all) == 0 {
				t.Fatal("no line")
			}
			for _, rec := range got.all {
				var want, written bytes.Buffer
				if err := slog.NewJSONHandler(&want, nil).Handle(context.Background(), rec); err != nil {
					t.Fatal(err)
				}
				var attrs []slog.Attr
				rec.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a); return true })
				if err := jsonlog.New(&written, nil).Write(context.Background(), rec.Time, rec.Level, rec.Message, attrs...); err != nil {
					t.Fatal(err)
				}
				if written.String() != want.String() {
					t.Errorf("wrote\n%s\nslog writes\n%s", written.String(), want.String())
				}
			}
		})
	}
}

// BenchmarkEdge is a plain routed request through the edge with its
// access line written by jsonlog to nowhere: the line's whole cost, with
// the CloudWatch metrics (Lambda) and without (the local server).
func BenchmarkEdge(b *testing.B) {
	for name, cfg := range map[string]Config{"metrics": {}, "no metrics": {NoMetrics: true}} {
		b.Run(name, func(b *testing.B) {
			k := &Kernel{cfg: cfg, log: slog.New(jsonlog.New(io.Discard, nil))}
			h := k.edge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				info := infoFrom(r.Context())
				info.group, info.operation, info.keyID, info.literalPath = "credits", "getCreditBalance", "key_abc", true
				_, _ = w.Write([]byte(`{"balance":"1"}`))
			}))
			req := httptest.NewRequest("GET", "/v1/credits/balance", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				w.Body.Reset()
				h.ServeHTTP(w, req)
			}
		})
	}
}
