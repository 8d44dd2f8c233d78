package usageapi_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"platformapi/shared/api/apitest"
)

// firstByte is a client connection that, when the first byte of the
// response reaches it, looks at what a process killed at that instant
// would have kept: the audit events already journaled.
type firstByte struct {
	*httptest.ResponseRecorder
	seen   func()
	called bool
}

func (f *firstByte) at() {
	if !f.called {
		f.called = true
		f.seen()
	}
}

func (f *firstByte) WriteHeader(code int) { f.at(); f.ResponseRecorder.WriteHeader(code) }

func (f *firstByte) Write(b []byte) (int, error) { f.at(); return f.ResponseRecorder.Write(b) }

// A request's audit event is journaled before the first byte of its answer
// leaves, a streamed download's included: a process killed once the client
// holds any of its answer has the event.
func TestAnAnsweredRequestsAuditEventIsJournaledBeforeItsFirstByte(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	content := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	id := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/files", Key: root, Idem: apitest.Idem(),
		Headers: map[string]string{"Content-Type": "application/octet-stream", "X-File-Name": "d.bin"}, Body: content}), 201).Str("id")
	for _, path := range []string{"/v1/files/" + id + "/content", "/v1/files/" + id, "/v1/files/file_missing"} {
		t.Run(path, func(t *testing.T) {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer "+root)
			var journaled bool
			w := &firstByte{ResponseRecorder: httptest.NewRecorder()}
			w.seen = func() {
				if err := e.Kernel.FlushAudit(context.Background()); err != nil {
					t.Fatal(err)
				}
				rid := w.Header().Get("X-Request-Id")
				for _, ev := range listAll(t, e, root, rangeQuery(e.Clock.Now().Add(-time.Hour), e.Clock.Now().Add(time.Hour))) {
					if ev["requestId"] == rid {
						journaled = true
					}
				}
			}
			e.Kernel.ServeHTTP(w, req)
			if w.Code >= 500 || !w.called {
				t.Fatalf("answered %d", w.Code)
			}
			if !journaled {
				t.Fatalf("the client held the first byte of %s before its audit event was journaled", path)
			}
		})
	}
}
