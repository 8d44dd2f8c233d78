package usageapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
	"platformapi/shared/harness/apitest"
)

// uploadFile uploads data and returns the file's id.
func uploadFile(e *apitest.Env, key string, data []byte) string {
	e.T.Helper()
	return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/files", Key: key, Idem: apitest.Idem(),
		Headers: map[string]string{"Content-Type": "application/octet-stream", "X-File-Name": "data.bin"}, Body: data}), 201).Str("id")
}

// crashAtFirstByte hands a response on and, the moment its first byte
// leaves, keeps what a kill -9 would leave of the audit journal: the
// segment files as they are on disk then.
type crashAtFirstByte struct {
	http.ResponseWriter
	once  sync.Once
	crash func()
}

func (c *crashAtFirstByte) WriteHeader(code int) {
	c.once.Do(c.crash)
	c.ResponseWriter.WriteHeader(code)
}

func (c *crashAtFirstByte) Write(b []byte) (int, error) {
	c.once.Do(c.crash)
	return c.ResponseWriter.Write(b)
}

func (c *crashAtFirstByte) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// snapshot copies the journal's segments from dir into a new directory.
func snapshot(t *testing.T, dir string) string {
	out := t.TempDir()
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Error(err)
	}
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil && !os.IsNotExist(err) {
			t.Error(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(name)), raw, 0o600); err != nil {
			t.Error(err)
		}
	}
	return out
}

// A download's audit event is journalled before its first byte reaches the
// client: a process killed right then leaves the event to the next start.
func TestADownloadsAuditEventIsJournalledBeforeItsFirstByte(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		data := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
		id := uploadFile(e, root, data)
		var left string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.Kernel.ServeHTTP(&crashAtFirstByte{ResponseWriter: w, crash: func() { left = snapshot(t, e.AuditDir) }}, r)
		}))
		defer srv.Close()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/files/"+id+"/content", nil)
		req.Header.Set("Authorization", "Bearer "+root)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Equal(got, data) {
			t.Fatalf("download: %d, %d bytes", res.StatusCode, len(got))
		}
		requestID := res.Header.Get("X-Request-Id")
		journalled := false
		names, _ := filepath.Glob(filepath.Join(left, "*.log"))
		for _, name := range names {
			raw, _ := os.ReadFile(name)
			journalled = journalled || bytes.Contains(raw, []byte(`"requestId":"`+requestID+`"`))
		}
		if !journalled {
			t.Fatalf("the journal a kill at the first byte leaves holds no event of request %s", requestID)
		}
		restarted, err := audit.NewEmbeddedRecorder(teststores.Embedded.Open(t, e.Clock.Now), e.Clock.Now, left)
		if err != nil {
			t.Fatalf("the next start cannot replay the journal: %v", err)
		}
		restarted.Close()
		if rest, _ := filepath.Glob(filepath.Join(left, "*.log")); len(rest) != 0 {
			t.Fatalf("the replay left %v uncommitted", rest)
		}
	})
}

// A download the client abandons mid-body keeps its one audit event, and the
// server's log says how the response ended.
func TestADownloadCutMidBodyKeepsOneEventAndLogsHowItEnded(t *testing.T) {
	e := apitest.New(t)
	since := e.Clock.Now()
	root, _ := e.RootKey(1, nil)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB: more than the socket buffers hold
	id := uploadFile(e, root, data)
	req, _ := http.NewRequest("GET", e.URL+"/v1/files/"+id+"/content", nil)
	req.Header.Set("Authorization", "Bearer "+root)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	requestID := res.Header.Get("X-Request-Id")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.Logs.String(), "response cut short") || !strings.Contains(e.Logs.String(), requestID) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line says request %s was cut short:\n%s", requestID, e.Logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	n := len(byRequest(listAll(t, e, root, rangeQuery(since, closeHour(t, e))))[requestID])
	if n != 1 {
		t.Fatalf("the cut download left %d events, want 1", n)
	}
}
