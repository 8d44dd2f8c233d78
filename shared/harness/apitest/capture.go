package apitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// CaptureEnv names a directory: when set, every exchange a test makes
// through Do is appended there as one JSON line, so the OpenAPI examples
// can be taken from real responses of the test suite (make
// openapi-examples) rather than written by hand.
const CaptureEnv = "APITEST_CAPTURE_DIR"

// Exchange is one captured request and its response.
type Exchange struct {
	Method       string          `json:"method"`
	Path         string          `json:"path"`
	Status       int             `json:"status"`
	RequestBody  json.RawMessage `json:"requestBody,omitempty"`
	ResponseBody json.RawMessage `json:"responseBody,omitempty"`
}

var captureFile struct {
	sync.Mutex
	f *os.File
}

// capture records a JSON exchange when CaptureEnv is set; bodies that are
// not JSON are left out.
func capture(method, path, reqType string, req []byte, status int, respType string, resp []byte) {
	dir := os.Getenv(CaptureEnv)
	if dir == "" {
		return
	}
	x := Exchange{Method: method, Path: strings.SplitN(path, "?", 2)[0], Status: status}
	if strings.Contains(reqType, "json") && json.Valid(req) {
		x.RequestBody = req
	}
	if strings.Contains(respType, "json") && json.Valid(resp) {
		x.ResponseBody = resp
	}
	line, err := json.Marshal(x)
	if err != nil {
		return
	}
	captureFile.Lock()
	defer captureFile.Unlock()
	if captureFile.f == nil {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.jsonl", os.Getpid())), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return
		}
		captureFile.f = f
	}
	_, _ = captureFile.f.Write(append(line, '\n'))
}
